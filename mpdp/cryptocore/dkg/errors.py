"""The one way a distributed key generation fails: every holder aborts and writes nothing."""

from __future__ import annotations

from mpdp.cryptocore.errors import CryptoError


class DkgAborted(CryptoError):
    """The ceremony stopped; `culprit` names the holder at fault when the check can tell (else None)."""

    def __init__(self, reason: str, culprit: int | None = None):
        who = f"key holder {culprit}: " if culprit is not None else ""
        super().__init__(f"distributed key generation aborted: {who}{reason}")
        self.reason = reason
        self.culprit = culprit
