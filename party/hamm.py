"""A party's (and key holder's) side of a Hamm session (hamm.md steps 1–3), free of gRPC: a voter
(party/voter.py) on the public X_aux whose proven partial decryptions of the aggregate go to Charlie, who,
not the aggregator, combines them; with verifiable noise it commits to its noise bits and takes the joint coin as
a DPPP teacher does (VOTING --queries--> COMMITTED --coin--> REVEALED --shares--> VOTED). A party that misses the
session ends quietly: M′ counts who voted."""

from __future__ import annotations

from typing import Callable

import numpy as np

from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.proto.v1 import hamm_pb2, threshold_sum_pb2
from mpdp.protocols.hamm.parameters import HammParameters
from mpdp.protocols.hamm.votes import vote_slots
from mpdp.sessions.errors import denied, invalid
from mpdp.sessions.identity import AGGREGATOR, CURATOR, Identity
from mpdp.sessions.matrices import shared_matrix_from_proto
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import handles
from mpdp.vote_proofs import well_formed
from party.resources import PartyResources
from party.voter import State, VoterSide

MAX_DEADLINE_S = 3600.0


class HammPartySide(VoterSide):
    """Step 2 (the votes, to the aggregator) and step 3 (partial decryptions, to Charlie, who combines them)."""

    protocol = "hamm"
    votes_message = hamm_pb2.HammVotes
    test_record_message = hamm_pb2.HammTestRecord
    decrypts_for = CURATOR

    def __init__(self, session_id: str, own: PartyResources, parameters: HammParameters, features: np.ndarray,
                 deadline_s: float):
        super().__init__(session_id, own, parameters, features)
        # The aggregator's vote collection, then the decryption; with verifiable noise the reveals and the flips.
        self.deadline_seconds = (4 if parameters.verifiable_noise else 2) * deadline_s + 30

    @property
    def participants(self) -> list[Identity]:
        return [AGGREGATOR, CURATOR]

    def votes(self) -> np.ndarray:
        """Step 2: h_i(x) on every point of X_aux (and class)."""
        return vote_slots(self.own.model.predict(self.features), self.parameters.classes)

    def cast_votes(self) -> hamm_pb2.HammVotes:
        """Step 2; with verifiable noise, commitments to the votes and to the noise bits (party/voter.py)."""
        if not self.parameters.verifiable_noise:
            return super().cast_votes()
        self._require(State.VOTING, "voting")
        return hamm_pb2.HammVotes(tosses=self.parameters.share_range, **self.commit_noise(self.votes()))

    @handles("coin")
    def reveal_to_aggregator(self, sender: Identity, body: threshold_sum_pb2.CoinCommitments) -> list[Outbound]:
        """Step 2b: every committed party's entry; answered with this party's coin share."""
        self._from_aggregator(sender, "coin")
        return [Outbound(AGGREGATOR, "reveal", self.reveal_coin_share(body))]

    @handles("shares")
    def flip_noise_bits(self, sender: Identity, body: threshold_sum_pb2.CoinShares) -> list[Outbound]:
        """Step 2c: every coin share; answered with step 2d, the signed flipped contribution."""
        self._from_aggregator(sender, "shares")
        return [Outbound(AGGREGATOR, "flipped", self.sign_flipped(body))]

    def partially_decrypt(self, request):
        self._give_up_commitments()
        return super().partially_decrypt(request)

    @property
    def ballot_shape(self) -> tuple[int, int]:
        return self.parameters.aux_points, self.parameters.vote_width

    @property
    def voters(self) -> int:
        return self.parameters.parties

    @property
    def min_contributors(self) -> int:
        return self.parameters.min_contributors


def protocol(resources: Callable[[Identity], PartyResources]) -> RoleProtocol:
    """The party's registry entry: the aggregator's `queries` (step 1) opens a party's side."""

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body) -> HammPartySide:
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not open a Hamm session at a party; the aggregator does")
        own = resources(me)
        parameters = HammParameters.from_proto(body.parameters)
        own.check_opening("hamm", session_id, parameters, body.client_signature)  # X_aux is Charlie's: unsigned
        check_key_id(own.public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        own.check_colluding(parameters.colluding)  # its own topology's c, not the opener's
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
        parameters.check_verifiable_size()
        if parameters.proven_votes:  # before any work: the holders' request must fit one message
            well_formed.check_size(own.public_key, parameters.parties, parameters.aux_points, parameters.vote_width,
                                   parameters.values * parameters.share_range if parameters.verifiable_noise else 0,
                                   parameters.holders_check_bits)
        own.admit(session_id, "hamm", parameters.guarantee())  # its own policy, before any work on its data
        parameters.layout(own.public_key.n)  # the slot widths must fit
        side = own.side(HammPartySide)(session_id, own, parameters, features, body.deadline_seconds)
        side.charge = own.spend(session_id, "hamm", parameters.guarantee())  # before the votes leave
        return side

    return RoleProtocol("hamm", hamm_pb2.HammMessage, frozenset({"queries"}), open_side, (HammPartySide,),
                        frozenset({"queries", "coin", "shares", "decryption_request"}))
