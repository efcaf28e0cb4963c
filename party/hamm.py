"""A party's (and key holder's) side of a Hamm session (hamm.md steps 1–3), free of gRPC.

VOTING --queries--> VOTED --decryption_request--> DONE (a party without a key share is DONE once it has
voted); any state --abort--> ABORTED. Only the party's encrypted (noisy) votes on the public X_aux leave it,
to the aggregator, and its proven partial decryptions of the aggregate, to Charlie: Charlie, not the
aggregator, combines them. A party that misses the session ends quietly: M′ counts who voted.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from cryptocore import ciphertext as ct
from cryptocore.key_checks import check_key_id
from hamm.parameters import HammParameters
from hamm.votes import vote_slots
from mpdp_proto.v1 import common_pb2, hamm_pb2, threshold_sum_pb2
from party import proven_ballot
from party.key_holder import proven_partials, signed
from party.resources import PartyResources
from sessions.errors import denied, invalid, precondition
from sessions.identity import AGGREGATOR, CLIENT, CURATOR, Identity
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
class Drawn:  # test mode only; never printed
    votes: np.ndarray = field(repr=False)
    noise: np.ndarray = field(repr=False)


class VoterSide(RoleSide):
    State = State
    announce_abort = False

    def __init__(self, session_id: str, own: PartyResources, parameters: HammParameters, features: np.ndarray,
                 deadline_s: float):
        super().__init__(session_id, State.VOTING)
        self.identity = Identity("party", own.id)
        self.own = own
        self.parameters = parameters
        self.features = features
        self.deadline_seconds = 2 * deadline_s + 30  # the aggregator's vote collection, then the decryption
        self.drawn: Drawn | None = None

    @property
    def participants(self) -> list[Identity]:
        return [AGGREGATOR, CURATOR]

    def may_abort(self, sender: Identity) -> bool:
        return sender in (AGGREGATOR, CURATOR, CLIENT)

    def receive(self, sender: Identity, kind: str, body) -> list[Outbound]:
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not send Hamm '{kind}' messages to a party")
        if kind == "queries":
            return [Outbound(AGGREGATOR, "votes", self.cast_votes())]
        if kind == "decryption_request":
            return [Outbound(CURATOR, "partial_decryptions", self.partially_decrypt(body))]
        raise invalid(f"a party does not take Hamm '{kind}' messages")

    def cast_votes(self) -> hamm_pb2.HammVotes:
        """Step 2: Enc(h_i(x) + z_i(x)) for every point (and class), packed, fresh."""
        self._require(State.VOTING, "voting")
        parameters, public_key = self.parameters, self.own.public_key
        votes = vote_slots(self.own.model.predict(self.features), parameters.classes)
        noise = np.array(parameters.draw_shares(votes.size), dtype=np.int64).reshape(votes.shape)
        if parameters.proven_votes:
            return self._cast_proven(votes, noise)
        plaintexts = parameters.layout(public_key.n).pack((votes + noise).ravel().tolist())
        ciphertexts = [ct.to_bytes(public_key.paillier, public_key.encryptor.encrypt(p)) for p in plaintexts]
        # An abort that arrived while voting wins: nothing is released.
        self._advance(State.VOTING, State.VOTED if self.own.key_share is not None else State.DONE, "releasing votes")
        if self.own.test_mode:
            self.drawn = Drawn(votes, noise)
        return hamm_pb2.HammVotes(tosses=parameters.share_range, votes=common_pb2.Ciphertexts(key_id=public_key.key_id,
                                                                              values=ciphertexts),
                                  signature=signed(self.own, SumSlot.of("hamm", self.session_id, self.parameters), public_key.key_id,
                                                   ciphertexts))

    def _cast_proven(self, votes: np.ndarray, noise: np.ndarray) -> hamm_pb2.HammVotes:
        """Step 2 with proven votes: Enc(z_i(x)) packed, and per point Enc(vote) with its proof."""
        p = self.parameters
        ballot = proven_ballot.cast(self.own, "hamm", self.session_id, p, p.aux_points, p.vote_width, votes, noise)
        self._advance(State.VOTING, State.VOTED if self.own.key_share is not None else State.DONE, "releasing votes")
        if self.own.test_mode:
            self.drawn = Drawn(votes, noise)
        return hamm_pb2.HammVotes(tosses=p.share_range, proven=ballot.proven, votes=ballot.noise,
                                  signature=ballot.signature)

    def partially_decrypt(self, request: threshold_sum_pb2.DecryptionRequest) -> threshold_sum_pb2.PartialDecryptions:
        """Step 3: check the request before any work, then one proven partial decryption per ciphertext."""
        if self.own.key_share is None:
            raise precondition(f"party {self.own.id} holds no key share")
        self._require(State.VOTED, "partial decryption")
        p = self.parameters
        partials = proven_partials(self.own, request, SumSlot.of("hamm", self.session_id, self.parameters), p.parties, p.min_contributors,
                                   p.layout(self.own.public_key.n).plaintexts_needed(p.values),
                                   proof_context("hamm", self.session_id))
        self._advance(State.VOTED, State.DONE, "releasing partial decryptions")
        return partials

    def test_record(self) -> tuple[str, object] | None:
        if self.drawn is None:
            return None
        return "test_record", hamm_pb2.HammTestRecord(votes=self.drawn.votes.ravel().tolist(),
                                                      noise=self.drawn.noise.ravel().tolist())


def protocol(resources: Callable[[Identity], PartyResources]) -> RoleProtocol:
    """The party's registry entry: the aggregator's `queries` (step 1) opens a party's side."""

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body) -> VoterSide:
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not open a Hamm session at a party; the aggregator does")
        own = resources(me)
        parameters = HammParameters.from_proto(body.parameters)
        check_key_id(own.public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        if not 1 <= own.id <= parameters.parties:
            raise invalid(f"party {own.id} is not among the session's {parameters.parties} parties")
        if parameters.dimension != own.features.shape[1]:
            raise invalid(f"the session declares d = {parameters.dimension}; this party's data has "
                          f"{own.features.shape[1]} features")
        features = shared_matrix_from_proto(body.features)  # one copy per host
        if features.shape != (parameters.aux_points, parameters.dimension):
            raise invalid(f"X_aux is {features.shape[0]}×{features.shape[1]}; the session declares "
                          f"{parameters.aux_points}×{parameters.dimension}")
        if not 0 < body.deadline_seconds <= MAX_DEADLINE_S:
            raise invalid(f"deadline must be in (0, {MAX_DEADLINE_S}] seconds")
        parameters.calibrate()  # each party derives N_i itself (cached per parameter set, bounded)
        own.admit(session_id, "hamm", parameters.guarantee())  # its own policy, before any work on its data
        parameters.layout(own.public_key.n)  # the slot widths must fit
        side = VoterSide(session_id, own, parameters, features, body.deadline_seconds)
        own.spend(session_id, "hamm", parameters.guarantee())  # before the votes leave
        return side

    return RoleProtocol("hamm", hamm_pb2.HammMessage, frozenset({"queries"}), open_side)
