"""What one (logical) party brings to every protocol: its data, its teacher model, its key share."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from mpdp.cryptocore.paillier.threshold import KeyShare, ThresholdPublicKey
from mpdp.privacy.composition import Guarantee
from mpdp.privacy.ledger import BudgetExceeded, Ledger, LedgerError, LedgerUnwritable, describe
from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.sessions import opening
from mpdp.sessions.errors import Kind, ProtocolError, denied, exhausted, invalid, precondition
from mpdp.threshold_sum.binding import ContributionKeys
from party import behaviours
from party.charge import Charge

log = logging.getLogger(__name__)

T = TypeVar("T")

REFUSED = "refused by the party's privacy policy"  # all an opener learns of a refusal: no reason, no spending
@dataclass
class PartyResources:
    id: int
    public_key: ThresholdPublicKey
    # Private: never in a repr or a log line.
    key_share: KeyShare | None = field(repr=False)
    model: Any = field(repr=False)  # a fitted scikit-learn classifier (DPPP's teacher)
    features: np.ndarray = field(repr=False)  # the party's own data (Pathak trains on it per session)
    labels: np.ndarray = field(repr=False)
    test_mode: bool = False
    fault: str | None = None  # test mode only: a misbehaving party's behaviour (party/behaviours.py); transport
    # faults are mpdp/wire/faults.py's
    ledger: Ledger | None = None  # what this party has spent on its data set (None: in-process twins)
    allow_unproven: bool = False  # its operator's `--allow-unproven`: paper calibrations without a proven ε
    # Signs its threshold-sum contributions, checks others' (None: a plaintext deployment or in-process twins).
    contribution_keys: ContributionKeys | None = field(default=None, repr=False)
    # c: the most logical parties one principal hosts in its topology; it refuses sessions calibrated for fewer
    colluding: int = 1
    behaviour: behaviours.Behaviour | None = field(default=None, init=False, repr=False)

    def __post_init__(self):
        if self.fault and not self.test_mode:
            raise ValueError("fault injection needs test mode")
        if self.fault:
            self.behaviour = behaviours.lookup(self.fault)
            if self.behaviour.prepare is not None:
                self.behaviour.prepare(self)

    def side(self, product: type[T]) -> type[T]:
        """The side class this party runs for `product` (a test-mode behaviour's subclass of it, or itself)."""
        return behaviours.side_class(self.behaviour, product)

    def check_opening(self, protocol: str, session_id: str, parameters,
                      signature: threshold_sum_pb2.ContributionSignature, public_inputs: bytes = b"") -> None:
        """First of all, before any work or charge: the client signed this session's opening, whoever forwarded it
        (mpdp.sessions.opening; nothing to check without keys: a plaintext deployment or an in-process twin)."""
        verifier = self.contribution_keys.verifier if self.contribution_keys is not None else None
        opening.check(verifier, protocol, session_id, parameters, signature, public_inputs)

    def check_colluding(self, colluding: int) -> None:
        """Before any work on the data: a session calibrated for fewer contributors per principal than this
        party's topology shows would leave less noise than claimed once one principal subtracts its shares."""
        if colluding < self.colluding:
            raise invalid(f"the session counts {colluding} contributors per principal; this deployment hosts up "
                          f"to {self.colluding} under one principal, whose shares a colluding aggregator removes")

    def admit(self, session_id: str, protocol: str, guarantee: Guarantee) -> None:
        """Before any computation on the data: the party's own policy (docs/privacy-budget.md) takes the
        session, or refuses it with `REFUSED` and nothing else; the reason goes to this party's log only."""
        if self.ledger is None:
            return
        self._policy(session_id, protocol, guarantee)
        try:
            self.ledger.check(guarantee)
        except BudgetExceeded as error:
            raise self.refuse(session_id, protocol, f"over the budget: {error}") from None
        except (LedgerError, OSError) as error:
            raise self.refuse(session_id, protocol, f"the ledger cannot be used: {error}") from None

    def spend(self, session_id: str, protocol: str, guarantee: Guarantee) -> Charge:
        """Before anything derived from the data leaves: record the session's guarantee in the ledger, or refuse
        the session as `admit` does (a concurrent session may have spent since). The side keeps the returned
        charge: refunded if the session aborts before its first release (party/charge.py)."""
        if self.ledger is None:
            return Charge(self.id, session_id, protocol, None)
        self._policy(session_id, protocol, guarantee)
        try:
            # A session id is used once (crypto.md, "Bound decryption"): contributions are signed for it, so
            # contributions to a reopened session could be mixed with the earlier one's.
            if any(entry.get("session") == session_id for entry in self.ledger.entries()):  # refunded ones too
                raise precondition(f"party {self.id} already took part in a session {session_id}")
            total = self.ledger.spend(session_id, protocol, guarantee)
        except BudgetExceeded as error:
            raise self.refuse(session_id, protocol, f"over the budget: {error}") from None
        except LedgerUnwritable as error:
            raise self.unrecorded(session_id, protocol, error) from None
        except (LedgerError, OSError) as error:
            raise self.refuse(session_id, protocol, f"the ledger cannot be used: {error}") from None
        log.info("party %d spent %s on %s (%s)%s", self.id, describe(guarantee), protocol, guarantee.mechanism,
                 "" if total is None else f"; total {describe(total)} of {self.ledger.budget}")
        return Charge(self.id, session_id, protocol, self.ledger)

    def _policy(self, session_id: str, protocol: str, guarantee: Guarantee) -> None:
        if guarantee.unproven and not self.allow_unproven:
            raise self.refuse(session_id, protocol, f"{guarantee.mechanism} has no proven ε and this party's "
                                                    "operator did not allow unproven mechanisms")

    def unrecorded(self, session_id: str, protocol: str, error: LedgerUnwritable) -> ProtocolError:
        """The ledger could not take the entry: the session does not open here. Not a policy decision, and the
        opener can act on it (retry once the operator freed space), so it says what happened; a disk's state
        says nothing about the data."""
        log.error("party %d could not record %s session %s: %s", self.id, protocol, session_id, error)
        charged = ("its entry stays recorded (the failure came after its commit point)" if error.charged
                   else "nothing was charged")
        if error.no_space:
            return exhausted(f"party {self.id} cannot record the session in its privacy ledger: no space left on "
                             f"its disk; {charged}; the session did not open there")
        return ProtocolError(Kind.UNAVAILABLE, f"party {self.id} cannot record the session in its privacy ledger: "
                                               f"an I/O error on its disk; {charged}; the session did not open there")

    def refuse(self, session_id: str, protocol: str, reason: str) -> ProtocolError:
        """The one refusal the opener sees; the reason (spending included) stays in this party's log."""
        log.warning("party %d refused %s session %s: %s", self.id, protocol, session_id, reason)
        return denied(REFUSED)
