"""A teacher's (and key holder's) side of a DPPP round (dppp.md steps 2 and 5), free of gRPC.

VOTING --queries--> VOTED --decryption_request or stand_down--> DONE (a teacher without a key share is DONE
once it has voted); any state --abort--> ABORTED. Only the teacher's own encrypted noisy votes and its proven
partial decryptions leave it. A teacher that misses the round ends quietly: DPPP tolerates dropouts.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from cryptocore import ciphertext as ct
from cryptocore.key_checks import check_key_id
from dppp.parameters import DpppParameters
from dppp.reference import one_hot
from mpdp_proto.v1 import common_pb2, dppp_pb2, threshold_sum_pb2
from party import proven_ballot
from party.key_holder import proven_partials, signed
from party.resources import PartyResources
from sessions.errors import denied, invalid, precondition
from sessions.identity import AGGREGATOR, CLIENT, Identity
from sessions.matrices import shared_matrix_from_proto
from sessions.outbound import Outbound
from sessions.protocol import RoleProtocol
from sessions.side import RoleSide
from threshold_sum.binding import SumSlot
from threshold_sum.context import proof_context

MAX_DEADLINE_S = 3600.0


class State(enum.Enum):
    VOTING = "voting"
    VOTED = "voted"
    DONE = "done"
    ABORTED = "aborted"


@dataclass
class Drawn:  # test mode only; still never printed
    votes: np.ndarray = field(repr=False)
    noise: np.ndarray = field(repr=False)


class TeacherSide(RoleSide):
    State = State
    announce_abort = False

    def __init__(self, session_id: str, own: PartyResources, parameters: DpppParameters, features: np.ndarray,
                 round_deadline_s: float):
        if parameters.key_id != own.public_key.key_id:
            raise invalid("parameters name another threshold key")
        if not 1 <= own.id <= parameters.teachers:
            raise invalid(f"teacher {own.id} is not among the session's {parameters.teachers} teachers")
        if features.shape[0] != parameters.queries:
            raise invalid(f"{features.shape[0]} query rows but {parameters.queries} queries declared")
        parameters.layout(own.public_key.n)  # session start: the slot widths must fit
        super().__init__(session_id, State.VOTING)
        self.identity = Identity("party", own.id)
        self.own = own
        self.parameters = parameters
        self.features = features
        # The aggregator waits up to one deadline for votes and two for partial decryptions (t holders
        # first, then everyone left).
        self.deadline_seconds = 3 * round_deadline_s + 30
        self.drawn: Drawn | None = None

    @property
    def participants(self) -> list[Identity]:
        return [AGGREGATOR]

    def may_abort(self, sender: Identity) -> bool:
        return sender in (AGGREGATOR, CLIENT)

    def receive(self, sender: Identity, kind: str, body) -> list[Outbound]:
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not send DPPP '{kind}' messages to a teacher")
        if kind == "queries":
            return [Outbound(AGGREGATOR, "votes", self.cast_votes())]
        if kind == "decryption_request":
            return [Outbound(AGGREGATOR, "partial_decryptions", self.partially_decrypt(body))]
        if kind == "stand_down":  # t other holders' shares sufficed
            self._advance(State.VOTED, State.DONE, "standing down")
            return []
        raise invalid(f"a teacher does not take DPPP '{kind}' messages")

    def cast_votes(self) -> dppp_pb2.DpppVotes:
        """Step 2: Enc(f_i(x_q) + z_{i,q}) for every (query, class), packed, fresh."""
        self._require(State.VOTING, "voting")
        parameters, public_key = self.parameters, self.own.public_key
        predictions = np.asarray(self.own.model.predict(self.features), dtype=int)
        votes = one_hot(predictions, parameters.classes)
        noise = np.array(parameters.draw_shares(votes.size), dtype=np.int64).reshape(votes.shape)
        if parameters.proven_votes:
            return self._cast_proven(votes, noise)
        cast = votes + noise
        if self.own.fault == "vote-two-ones":  # test mode only: a second 1 in query 0, unproven
            cast[0, 1 if votes[0, 0] else 0] += 1
        plaintexts = parameters.layout(public_key.n).pack(cast.ravel().tolist())
        # The paper's layout is the measured baseline: plain phe encryption (r^n mod n²) as well.
        encrypt = public_key.encryptor.encrypt if parameters.packed else public_key.paillier.raw_encrypt
        ciphertexts = [ct.to_bytes(public_key.paillier, encrypt(p)) for p in plaintexts]
        # An abort that arrived while voting wins: nothing is released and the session stays aborted.
        self._advance(State.VOTING, State.VOTED if self.own.key_share is not None else State.DONE, "releasing votes")
        if self.own.test_mode:  # what a teacher drew is kept for the test record only
            self.drawn = Drawn(votes, noise)
        return dppp_pb2.DpppVotes(tosses=parameters.share_range, votes=common_pb2.Ciphertexts(key_id=public_key.key_id,
                                                                               values=ciphertexts),
                                  signature=signed(self.own, SumSlot.of("dppp", self.session_id, self.parameters), public_key.key_id,
                                                   ciphertexts))

    def _cast_proven(self, votes: np.ndarray, noise: np.ndarray) -> dppp_pb2.DpppVotes:
        """Step 2 with proven votes: Enc(z_{i,q}) packed, and per query Enc(one-hot) with its proof."""
        p = self.parameters
        ballot = proven_ballot.cast(self.own, "dppp", self.session_id, p, p.queries, p.classes, votes, noise)
        self._advance(State.VOTING, State.VOTED if self.own.key_share is not None else State.DONE, "releasing votes")
        if self.own.test_mode:  # what a teacher drew is kept for the test record only
            self.drawn = Drawn(votes, noise)
        return dppp_pb2.DpppVotes(tosses=p.share_range, proven=ballot.proven, votes=ballot.noise,
                                  signature=ballot.signature)

    def partially_decrypt(self, request: threshold_sum_pb2.DecryptionRequest) -> threshold_sum_pb2.PartialDecryptions:
        """Steps 4–5: check the request before any work, then one proven partial decryption per ciphertext."""
        if self.own.key_share is None:
            raise precondition(f"party {self.own.id} holds no key share")
        self._require(State.VOTED, "partial decryption")
        p = self.parameters
        partials = proven_partials(self.own, request, SumSlot.of("dppp", self.session_id, self.parameters), p.teachers,
                                   p.calibration.min_contributors,
                                   p.layout(self.own.public_key.n).plaintexts_needed(p.values),
                                   proof_context("dppp", self.session_id))
        self._advance(State.VOTED, State.DONE, "releasing partial decryptions")  # not aborted meanwhile
        return partials

    def test_record(self) -> tuple[str, object] | None:
        if self.drawn is None:
            return None
        return "test_record", dppp_pb2.DpppTestRecord(votes=self.drawn.votes.ravel().tolist(),
                                                      noise=self.drawn.noise.ravel().tolist())


def protocol(resources: Callable[[Identity], PartyResources]) -> RoleProtocol:
    """The party's registry entry: the aggregator's `queries` (step 1) opens a teacher's side."""

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body) -> TeacherSide:
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not open a DPPP round; the aggregator does")
        own = resources(me)
        parameters = DpppParameters.from_proto(body.parameters)
        check_key_id(own.public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        features = shared_matrix_from_proto(body.features)  # one copy per host
        if features.shape != (parameters.queries, own.features.shape[1]):
            raise invalid(f"queries are {features.shape[0]}×{features.shape[1]}; the session declares "
                          f"{parameters.queries} and the model takes {own.features.shape[1]} features")
        if not 0 < body.deadline_seconds <= MAX_DEADLINE_S:
            raise invalid(f"deadline must be in (0, {MAX_DEADLINE_S}] seconds")
        parameters.calibrate()  # each party derives N_i itself (cached per parameter set, bounded)
        own.admit(session_id, "dppp", parameters.guarantee())  # its own policy, before any work on its data
        side = TeacherSide(session_id, own, parameters, features, body.deadline_seconds)
        own.spend(session_id, "dppp", parameters.guarantee())  # before the votes leave
        return side

    return RoleProtocol("dppp", dppp_pb2.DpppMessage, frozenset({"queries"}), open_side)
