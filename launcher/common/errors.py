"""Errors the CLI reports as one clear line (plus, for a role that died, the end of its log)."""


class StartupError(RuntimeError):
    """A deployment could not be started: a role did not come up, or one is already running."""


class CeremonyError(RuntimeError):
    """The key holders' ceremony failed: a holder did not start, stopped answering or aborted (named)."""
