"""A teacher's (and key holder's) DPPP session: the state machine, free of gRPC.

VOTING --cast_votes--> VOTED --begin_decryption--> DECRYPTING --partial_decrypt--> DONE;
any state --abort--> ABORTED.
Steps 2 and 5 of dppp.md. Only the teacher's own encrypted noisy votes and its
proven partial decryptions leave this object.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from cryptocore import ciphertext as ct
from cryptocore.key_checks import check_key_id
from cryptocore.threshold import KeyShare, PartialDecryption, ThresholdPublicKey
from dppp.parameters import DpppParameters, proof_context
from dppp.reference import one_hot
from privacy.binomial import sample_binomial
from sessions.errors import invalid, precondition
from sessions.state_machine import SessionStateMachine


class State(enum.Enum):
    VOTING = "voting"
    VOTED = "voted"
    DECRYPTING = "decrypting"
    DONE = "done"
    ABORTED = "aborted"


@dataclass
class TestRecord:  # test mode only; still never printed
    votes: np.ndarray = field(repr=False)
    noise: np.ndarray = field(repr=False)


class TeacherSession(SessionStateMachine):
    State = State

    def __init__(
        self,
        session_id: str,
        teacher: int,
        parameters: DpppParameters,
        features: np.ndarray,
        public_key: ThresholdPublicKey,
        key_share: KeyShare | None,
    ):
        if parameters.key_id != public_key.key_id:
            raise invalid("parameters name another threshold key")
        if not 1 <= teacher <= parameters.teachers:
            raise invalid(f"teacher {teacher} is not among the session's {parameters.teachers} teachers")
        if features.shape[0] != parameters.queries:
            raise invalid(f"{features.shape[0]} query rows but {parameters.queries} queries declared")
        parameters.layout(public_key.n)  # session start: the slot widths must fit
        super().__init__(session_id, State.VOTING)
        self.teacher = teacher
        self.parameters = parameters
        self.features = features
        self.public_key = public_key
        self.key_share = key_share
        self.test_record: TestRecord | None = None

    def cast_votes(self, model) -> tuple[int, list[bytes]]:
        """Step 2: Enc(f_i(x_q) + z_{i,q}) for every (query, class), packed, fresh."""
        self._require(State.VOTING, "voting")
        parameters = self.parameters
        predictions = np.asarray(model.predict(self.features), dtype=int)
        votes = one_hot(predictions, parameters.classes)
        tosses = parameters.calibration.tosses_per_teacher
        noise = np.array(sample_binomial(tosses, votes.size), dtype=np.int64).reshape(votes.shape)
        layout = parameters.layout(self.public_key.n)
        encryptor = self.public_key.encryptor
        paillier = self.public_key.paillier
        plaintexts = layout.pack((votes + noise).ravel().tolist())
        ciphertexts = [ct.to_bytes(paillier, encryptor.encrypt(p)) for p in plaintexts]
        # An abort that arrived while voting wins: nothing is released and the session stays aborted.
        self._advance(State.VOTING, State.VOTED, "releasing votes")
        self.test_record = TestRecord(votes, noise)
        return tosses, ciphertexts

    def begin_decryption(self, key_id: bytes, aggregate: list[bytes], contributors: list[int]) -> list[int]:
        """Step 4: check the request before any work; returns the parsed ciphertexts."""
        self._require(State.VOTED, "partial decryption")
        if self.key_share is None:
            raise precondition(f"party {self.teacher} holds no key share")
        parameters = self.parameters
        if len(set(contributors)) != len(contributors) or not all(1 <= c <= parameters.teachers for c in contributors):
            raise invalid("contributor set names unknown or repeated teachers")
        needed = parameters.calibration.min_contributors
        if len(contributors) < needed:
            raise precondition(f"insufficient noise: {len(contributors)} contributors, need {needed}")
        check_key_id(self.public_key.key_id, key_id)
        expected = parameters.layout(self.public_key.n).plaintexts_needed(parameters.values)
        if len(aggregate) != expected:
            raise invalid(f"aggregate has {len(aggregate)} ciphertexts, expected {expected}")
        ciphertexts = [ct.from_bytes(self.public_key.paillier, data) for data in aggregate]
        self._advance(State.VOTED, State.DECRYPTING, "partial decryption")
        return ciphertexts

    def partial_decrypt(self, ciphertexts: list[int]) -> list[PartialDecryption]:
        """Step 5: one proven partial decryption per ciphertext; at most once per session."""
        self._require(State.DECRYPTING, "partial decryption")
        partials = [
            self.key_share.partial_decrypt(c, proof_context(self.session_id, index))
            for index, c in enumerate(ciphertexts)
        ]
        self._advance(State.DECRYPTING, State.DONE, "releasing partial decryptions")  # not aborted meanwhile
        return partials
