"""A teacher's (and key holder's) side of a DPPP round (dppp.md steps 2 and 5), free of gRPC: a voter
(party/voter.py) that also takes `stand_down` (VOTED --stand_down--> DONE)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from cryptocore import ciphertext as ct
from cryptocore.key_checks import check_key_id
from dppp.parameters import DpppParameters
from dppp.reference import one_hot
from mpdp_proto.v1 import dppp_pb2
from party.resources import PartyResources
from party.voter import State, VoterSide
from sessions.errors import denied, invalid
from sessions.identity import AGGREGATOR, Identity
from sessions.matrices import matrix_from_proto
from sessions.outbound import Outbound
from sessions.protocol import RoleProtocol
from sessions.side import handles

MAX_DEADLINE_S = 3600.0


class DpppTeacherSide(VoterSide):
    """Step 2 (the votes) and step 5 (partial decryptions, for the aggregator); `stand_down` when t other
    holders' shares sufficed."""

    protocol = "dppp"
    votes_message = dppp_pb2.DpppVotes
    test_record_message = dppp_pb2.DpppTestRecord
    decrypts_for = AGGREGATOR

    def __init__(self, session_id: str, own: PartyResources, parameters: DpppParameters, features: np.ndarray,
                 round_deadline_s: float):
        if parameters.key_id != own.public_key.key_id:
            raise invalid("parameters name another threshold key")
        if not 1 <= own.id <= parameters.teachers:
            raise invalid(f"teacher {own.id} is not among the session's {parameters.teachers} teachers")
        if features.shape[0] != parameters.queries:
            raise invalid(f"{features.shape[0]} query rows but {parameters.queries} queries declared")
        parameters.layout(own.public_key.n)  # session start: the slot widths must fit
        super().__init__(session_id, own, parameters, features)
        # The aggregator waits up to one deadline for votes and two for partial decryptions (t holders
        # first, then everyone left).
        self.deadline_seconds = 3 * round_deadline_s + 30

    @property
    def participants(self) -> list[Identity]:
        return [AGGREGATOR]

    def votes(self) -> np.ndarray:
        """Step 2: f_i(x_q), one-hot."""
        return one_hot(np.asarray(self.own.model.predict(self.features), dtype=int), self.parameters.classes)

    @property
    def ballot_shape(self) -> tuple[int, int]:
        return self.parameters.queries, self.parameters.classes

    @property
    def voters(self) -> int:
        return self.parameters.teachers

    @property
    def min_contributors(self) -> int:
        return self.parameters.calibration.min_contributors

    def _cast(self, votes: np.ndarray, noise: np.ndarray) -> np.ndarray:
        cast = votes + noise
        if self.own.fault == "vote-two-ones":  # test mode only: a second 1 in query 0, unproven
            cast[0, 1 if votes[0, 0] else 0] += 1
        return cast

    def _encrypt(self, cast: np.ndarray) -> list[bytes]:
        if self.parameters.packed:
            return super()._encrypt(cast)
        # The paper's layout is the measured baseline: plain phe encryption (r^n mod n²) as well.
        public_key = self.own.public_key
        plaintexts = self.parameters.layout(public_key.n).pack(cast.ravel().tolist())
        return [ct.to_bytes(public_key.paillier, public_key.paillier.raw_encrypt(p)) for p in plaintexts]

    @handles("stand_down")
    def stand_down(self, sender: Identity, body) -> list[Outbound]:
        """t other holders' shares sufficed: nothing more to do."""
        self._from_aggregator(sender, "stand_down")
        self._advance(State.VOTED, State.DONE, "standing down")
        return []


def protocol(resources: Callable[[Identity], PartyResources]) -> RoleProtocol:
    """The party's registry entry: the aggregator's `queries` (step 1) opens a teacher's side."""

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body) -> DpppTeacherSide:
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not open a DPPP round; the aggregator does")
        own = resources(me)
        parameters = DpppParameters.from_proto(body.parameters)
        check_key_id(own.public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        features = matrix_from_proto(body.features)
        if features.shape != (parameters.queries, own.features.shape[1]):
            raise invalid(f"queries are {features.shape[0]}×{features.shape[1]}; the session declares "
                          f"{parameters.queries} and the model takes {own.features.shape[1]} features")
        if not 0 < body.deadline_seconds <= MAX_DEADLINE_S:
            raise invalid(f"deadline must be in (0, {MAX_DEADLINE_S}] seconds")
        parameters.calibrate()  # each party derives N_i itself (cached per parameter set, bounded)
        own.admit(session_id, "dppp", parameters.guarantee())  # its own policy, before any work on its data
        side = DpppTeacherSide(session_id, own, parameters, features, body.deadline_seconds)
        own.spend(session_id, "dppp", parameters.guarantee())  # before the votes leave
        return side

    return RoleProtocol("dppp", dppp_pb2.DpppMessage, frozenset({"queries"}), open_side, (DpppTeacherSide,),
                        frozenset({"queries", "decryption_request", "stand_down"}))
