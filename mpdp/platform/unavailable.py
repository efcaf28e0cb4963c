"""A helper process this one relies on (the privacy accountant's child) died or stopped answering: the request
fails, and a retry may succeed (the next call starts a new helper). The sessions answer it as UNAVAILABLE without
knowing which helper it was."""


class HelperUnavailable(RuntimeError):
    """A helper process died during the call: the request fails, retryably."""
