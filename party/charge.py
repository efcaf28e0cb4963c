"""A party's charge for one session, from its ledger entry to the first message that may lead to a release: a
session that aborts before that message left is refunded; after it, the charge stays.

What may lead to a release is anything derived from the party's data (its encrypted votes or the commitments to
them, its noisy upload, its shares of Pathak's count or model) and its partial decryptions: once one has left,
the releasing roles (untrusted) may combine it without this party, so only a charge nothing of which left is
refunded. The side says so (`release`) just before it hands such a message to its host, after all the work that
made it; an abort that came first wins, and the message is not sent.

`release` and `refund_unless_released` exclude each other under one lock, so exactly one of them takes effect:
either the message leaves and the charge stays, or the charge is refunded and `release` refuses, the step fails
and nothing leaves. A refund is a new ledger line (mpdp/privacy/ledger.py); if it cannot be written (a full
disk) the charge stays: over-counting is the safe error. A crash between the charge and the refund keeps the
charge too: after a restart the party has no record of whether its message had left, so it does not refund.
"""

from __future__ import annotations

import enum
import logging
import threading

from mpdp.privacy.ledger import Ledger, LedgerError
from mpdp.sessions.errors import aborted

log = logging.getLogger(__name__)


class Stage(enum.Enum):
    CHARGED = "charged"  # recorded; nothing derived from the data has left
    RELEASED = "released"  # something that may lead to a release has left (or is leaving): the charge stays
    ENDED = "ended"  # aborted before any release: refunded (or kept when the refund could not be written)


class Charge:
    def __init__(self, party: int, session_id: str, protocol: str, ledger: Ledger | None):
        self.party, self.session_id, self.protocol, self.ledger = party, session_id, protocol, ledger
        self.stage = Stage.CHARGED
        self._lock = threading.Lock()

    def release(self) -> None:
        """Just before a message that may lead to a release leaves: from now on the charge stays. Raises ABORTED
        if the session was refunded meanwhile (that message must not leave)."""
        with self._lock:
            if self.stage is Stage.ENDED:
                raise aborted(f"session {self.session_id} was aborted and its charge refunded before party "
                              f"{self.party}'s data left")
            self.stage = Stage.RELEASED

    def refund_unless_released(self, reason: str) -> bool:
        """The session aborted: refund the charge if nothing that may lead to a release has left. True if a
        refund was recorded."""
        with self._lock:
            if self.stage is not Stage.CHARGED:
                return False
            self.stage = Stage.ENDED
            if self.ledger is None:  # an in-process twin without a ledger: nothing was recorded
                return False
            try:
                self.ledger.refund(self.session_id, self.protocol, f"aborted before party {self.party}'s data left: "
                                                                   f"{reason}")
            except (LedgerError, OSError) as error:
                log.error("party %d keeps its charge for %s session %s: the refund could not be recorded (%s)",
                          self.party, self.protocol, self.session_id, error)
                return False
        log.info("party %d refunded %s session %s: it aborted before the party's data left (%s)", self.party,
                 self.protocol, self.session_id, reason)
        return True


class Charged:
    """A party's side that spends: `charge` is set when its session is charged; the side calls `_release()`
    before each message that may lead to a release; an abort refunds what nothing left on. Listed before the
    side's base class, so that its `_forget` runs on every abort."""

    charge: Charge | None = None

    def _release(self) -> None:
        if self.charge is not None:
            self.charge.release()

    def _forget(self) -> None:
        super()._forget()  # type: ignore[misc]
        if self.charge is not None:
            self.charge.refund_unless_released(getattr(self, "abort_reason", "") or "aborted")
