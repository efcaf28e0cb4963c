"""Errors the CLI reports as one clear line (plus, for a role that died, the end of its log)."""


class StartupError(RuntimeError):
    """A deployment could not be started: a role did not come up, or one is already running."""
