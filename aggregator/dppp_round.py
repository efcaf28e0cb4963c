"""The aggregator's DPPP round: the state machine, free of gRPC (dppp.md steps 2–6).

COLLECTING --close_collection--> DECRYPTING --finish--> DONE;  any --abort--> ABORTED.
The aggregator only ever holds ciphertexts, proven partial decryptions and the
final noisy histograms.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from cryptocore import ciphertext as ct
from cryptocore.errors import CryptoError, InvalidShare, NotEnoughShares
from cryptocore.key_checks import check_key_id
from cryptocore.threshold import PartialDecryption, ThresholdPublicKey, combine, verify
from dppp.parameters import DpppParameters, proof_context
from dppp.reference import labels as argmax_labels
from sessions.errors import aborted, denied, invalid, precondition
from sessions.state_machine import SessionStateMachine
from wire.identity import Identity, party


class State(enum.Enum):
    COLLECTING = "collecting votes"
    DECRYPTING = "decrypting"
    DONE = "done"
    ABORTED = "aborted"


@dataclass
class RoundResult:
    histograms: np.ndarray  # queries × classes, noise mean removed
    labels: np.ndarray
    contributors: list[int]
    decryptors: list[int]
    rejected: dict[int, str] = field(default_factory=dict)


class DpppRound(SessionStateMachine):
    State = State

    def __init__(self, session_id: str, parameters: DpppParameters, public_key: ThresholdPublicKey,
                 teachers: list[int], key_holders: list[int]):
        if parameters.key_id != public_key.key_id:
            raise invalid("the session names another threshold key than the aggregator's")
        if parameters.teachers != len(teachers):
            raise invalid(f"the session declares {parameters.teachers} teachers; this topology has {len(teachers)}")
        super().__init__(session_id, State.COLLECTING)
        self.parameters = parameters
        self.public_key = public_key
        self.teachers = list(teachers)
        self.key_holders = list(key_holders)
        self.layout = parameters.layout(public_key.n)
        self.ciphertext_count = self.layout.plaintexts_needed(parameters.values)
        self.votes: dict[int, list[int]] = {}
        self.absent_teachers: dict[int, str] = {}
        self.aggregate: list[int] = []
        self.contributors: list[int] = []
        self.partials: dict[int, list[PartialDecryption]] = {}
        self.pending_holders: set[int] = set()
        self.absent_holders: dict[int, str] = {}
        self.rejected: dict[int, str] = {}

    def _require_sender(self, sender: Identity | None, claimed: int, allowed: list[int], role: str) -> None:
        if sender != party(claimed):
            raise denied(f"message claims {role} {claimed} but comes from {sender or 'an unidentified caller'}")
        if claimed not in allowed:
            raise denied(f"party {claimed} is not a {role} of session {self.session_id}")

    # Step 2 ---------------------------------------------------------------
    def accept_votes(self, sender: Identity | None, teacher: int, tosses: int, key_id: bytes, values: list[bytes]) -> None:
        self._require(State.COLLECTING, "votes")
        self._require_sender(sender, teacher, self.teachers, "teacher")
        if teacher in self.votes:
            raise precondition(f"teacher {teacher} already voted in session {self.session_id} (replay)")
        if teacher in self.absent_teachers:
            raise precondition(f"teacher {teacher} was given up on: {self.absent_teachers[teacher]}")
        expected_tosses = self.parameters.calibration.tosses_per_teacher
        if tosses != expected_tosses:
            raise invalid(f"teacher {teacher} used N_i = {tosses}, the session requires {expected_tosses}")
        check_key_id(self.public_key.key_id, key_id)
        if len(values) != self.ciphertext_count:
            raise invalid(f"{len(values)} vote ciphertexts, expected {self.ciphertext_count}")
        self.votes[teacher] = [ct.from_bytes(self.public_key.paillier, v) for v in values]

    def mark_teacher_absent(self, teacher: int, reason: str) -> None:
        if self.state is State.COLLECTING and teacher not in self.votes:
            self.absent_teachers[teacher] = reason

    @property
    def all_votes_in(self) -> bool:
        return len(self.votes) + len(self.absent_teachers) >= len(self.teachers)

    # Step 3 ---------------------------------------------------------------
    def close_collection(self) -> tuple[list[int], list[int]]:
        """C = Π_{i∈S} Enc_i, re-randomised once (every holder gets identical C)."""
        self._require(State.COLLECTING, "closing the vote collection")
        needed = self.parameters.calibration.min_contributors
        if len(self.votes) < needed:
            reason = f"insufficient noise: {len(self.votes)} of {len(self.teachers)} teachers contributed, need {needed}"
            self.abort(reason)
            raise aborted(reason)
        paillier, encryptor = self.public_key.paillier, self.public_key.encryptor
        self.contributors = sorted(self.votes)
        columns = zip(*(self.votes[t] for t in self.contributors))
        self.aggregate = [encryptor.rerandomise(ct.add(paillier, *column)) for column in columns]
        self.state = State.DECRYPTING
        return self.aggregate, self.contributors

    # Step 5 ---------------------------------------------------------------
    def accept_partials(self, sender: Identity | None, holder: int, partials: list[PartialDecryption]) -> None:
        """Cheap checks; the caller then runs `verify_partials` (expensive) off the event loop."""
        self._require(State.DECRYPTING, "partial decryptions")
        self._require_sender(sender, holder, self.key_holders, "key holder")
        if holder in self.partials or holder in self.pending_holders or holder in self.rejected:
            raise precondition(f"key holder {holder} already answered (replay)")
        if len(partials) != len(self.aggregate):
            raise invalid(f"{len(partials)} partial decryptions for {len(self.aggregate)} ciphertexts")
        self.pending_holders.add(holder)

    def verify_partials(self, holder: int, partials: list[PartialDecryption]) -> None:
        """Verify every proof; a bad one rejects (and names) the holder."""
        try:
            for index, (c, partial) in enumerate(zip(self.aggregate, partials)):
                verify(self.public_key, c, partial, proof_context(self.session_id, index))
        except InvalidShare as error:
            self.rejected[holder] = f"ciphertext {index}: {error.reason}"
            raise
        finally:
            self.pending_holders.discard(holder)
        if self.state is State.DECRYPTING:
            self.partials[holder] = partials

    def mark_holder_absent(self, holder: int, reason: str) -> None:
        if holder not in self.partials:
            self.absent_holders[holder] = reason

    @property
    def enough_shares(self) -> bool:
        return len(self.partials) >= self.public_key.threshold

    @property
    def decryption_settled(self) -> bool:
        """Every reachable holder answered (so every bad share is found), or the deadline decides."""
        answered = len(self.partials) + len(self.rejected) + len(self.absent_holders)
        return answered >= len(self.key_holders) and not self.pending_holders

    # Step 6 ---------------------------------------------------------------
    def finish(self) -> RoundResult:
        self._require(State.DECRYPTING, "combining")
        if not self.enough_shares:
            error = NotEnoughShares(self.public_key.threshold, len(self.partials), self.rejected)
            self.abort(str(error))
            raise aborted(str(error))
        decryptors = sorted(self.partials)[: self.public_key.threshold]
        try:
            plaintexts = [
                combine(self.public_key, [self.partials[h][index] for h in decryptors])
                for index in range(len(self.aggregate))
            ]
            sums = self.layout.unpack(plaintexts, self.parameters.values, biased_summands=len(self.contributors))
        except CryptoError as error:  # a plaintext outside the layout: malformed votes
            reason = f"the aggregate does not decrypt to valid counts: {error}"
            self.abort(reason)
            raise aborted(reason) from None
        counts = np.array(sums, dtype=object).reshape(self.parameters.queries, self.parameters.classes)
        self._check_feasible(counts)
        mean = len(self.contributors) * (self.parameters.calibration.tosses_per_teacher // 2)
        histograms = counts.astype(np.int64) - mean
        self._advance(State.DECRYPTING, State.DONE, "releasing the histograms")
        return RoundResult(histograms, argmax_labels(histograms), self.contributors, decryptors, dict(self.rejected))

    def _check_feasible(self, counts: np.ndarray) -> None:
        """Honest teachers give each count in [0, K′ + Σ N_i] and each query's total in [K′, K′ + C·Σ N_i]
        (one one-hot vote and C Binomial shares each). Anything else means stuffed votes: abort, release nothing."""
        contributors = len(self.contributors)
        noise = contributors * self.parameters.calibration.tosses_per_teacher
        totals = counts.sum(axis=1)
        if counts.min() < 0 or counts.max() > contributors + noise:
            reason = (f"decrypted counts outside the feasible range [0, {contributors + noise}] "
                      f"(K′ = {contributors}, Σ N_i = {noise}): a teacher's votes are malformed")
        elif totals.min() < contributors or totals.max() > contributors + self.parameters.classes * noise:
            reason = "a query's decrypted votes do not add up to one vote per contributor: a teacher's votes are malformed"
        else:
            return
        self.abort(reason)
        raise aborted(reason)

    def _forget(self) -> None:
        self.votes.clear()
        self.aggregate = []
        self.partials.clear()
