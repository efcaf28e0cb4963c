"""Key sizes, apart from the arithmetic so that the CLI can name them without importing it."""

DEFAULT_KEY_BITS = 2048
MIN_KEY_BITS = 1024  # allowed for tests and quick demos only
