"""A teacher's (and key holder's) side of a DPPP round (dppp.md steps 2 and 5), free of gRPC: a voter
(party/voter.py) that also takes `stand_down` (VOTED --stand_down--> DONE) and, with verifiable noise, the joint
coin (VOTING --queries--> COMMITTED --coin--> REVEALED --shares--> VOTED, or DONE without a key share). The
offline fill of its noise pool is a session of its own (party/dppp_pool.py)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.proofs.precomputed_powers import PowerPool
from mpdp.learning import ensemble
from mpdp.proto.v1 import dppp_pb2, threshold_sum_pb2
from mpdp.protocols.dppp import pool_opening
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.protocols.dppp.pool_opening import PoolFill
from mpdp.protocols.dppp.reference import one_hot
from mpdp.sessions.errors import denied, invalid
from mpdp.sessions.identity import AGGREGATOR, Identity
from mpdp.sessions.matrices import shared_matrix_from_proto
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import handles
from mpdp.vote_proofs import votes as vote_proofs
from mpdp.vote_proofs.noise_pool import Pools
from party.dppp_pool import DpppPoolTeacherSide
from party.resources import PartyResources
from party.teachers import ensemble_of
from party.voter import State, VoterSide

MAX_DEADLINE_S = 3600.0


class DpppTeacherSide(VoterSide):
    """Step 2 (the votes; with verifiable noise 2–2d: commitments, the coin's entries answered with a share, every
    share answered with the signed flipped contribution) and step 5 (partial decryptions, for the aggregator); `stand_down` when t other holders' shares sufficed."""

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
        if parameters.ensemble > len(own.labels):  # before any training
            raise invalid(f"an ensemble of {parameters.ensemble} models needs at least {parameters.ensemble} rows; "
                          f"party {own.id} holds {len(own.labels)}")
        super().__init__(session_id, own, parameters, features)
        self._model_votes: np.ndarray | None = None  # proven votes: Q·T one-hot rows, until the ballot proves them
        # The aggregator waits up to one deadline for votes and two for partial decryptions (t holders
        # first, then everyone left); with verifiable noise three more: the reveals, the flips, and slack.
        self.deadline_seconds = (6 if parameters.verifiable_noise else 3) * round_deadline_s + 30

    @property
    def participants(self) -> list[Identity]:
        return [AGGREGATOR]

    def votes(self) -> np.ndarray:
        """Step 2: Σ_t onehot(f_i,t(x_q)) over the teacher's T models (f_i(x_q), one-hot, when T = 1)."""
        classes = self.parameters.classes
        predictions = self._predictions()
        if self.parameters.proven_votes:  # row-major (query, model): the proven ballot's order (vote_proofs/votes.py)
            self._model_votes = np.stack([one_hot(p, classes) for p in predictions], axis=1).reshape(-1, classes)
        return ensemble.ballot(predictions, classes)

    def _predictions(self) -> list[np.ndarray]:
        """Each of the teacher's T models' labels of the queries."""
        return [np.asarray(model.predict(self.features), dtype=int)
                for model in ensemble_of(self.own.model, self.parameters.ensemble)]

    @property
    def ballot_copies(self) -> int:
        return self.parameters.ensemble

    def proven_slots(self, votes: np.ndarray) -> np.ndarray:
        """Each model's one-hot vote, T per query: each proven on its own, their sum the ballot's counts. Handed
        over once: the side keeps no plaintext vote."""
        slots, self._model_votes = self._model_votes, None
        assert slots is not None and slots.shape[0] == votes.shape[0] * self.ballot_copies
        return slots

    def cast_votes(self) -> dppp_pb2.DpppVotes:
        """Step 2; with verifiable noise, commitments to the votes and to the noise bits (`_commit`)."""
        if not self.parameters.verifiable_noise:
            return super().cast_votes()
        self._require(State.VOTING, "voting")
        return dppp_pb2.DpppVotes(tosses=self.parameters.share_range, **self.commit_noise(self.votes()))

    @property
    def ballot_shape(self) -> tuple[int, int]:
        return self.parameters.queries, self.parameters.classes

    @property
    def voters(self) -> int:
        return self.parameters.teachers

    @property
    def min_contributors(self) -> int:
        return self.parameters.calibration.min_contributors

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
        self._give_up_commitments()
        self._advance(State.VOTED, State.DONE, "standing down")
        return []

    @handles("coin")
    def reveal_to_aggregator(self, sender: Identity, body: threshold_sum_pb2.CoinCommitments) -> list[Outbound]:
        """Step 2b: every committed teacher's entry; answered with this teacher's coin share."""
        self._from_aggregator(sender, "coin")
        return [Outbound(AGGREGATOR, "reveal", self.reveal_coin_share(body))]

    @handles("shares")
    def flip_noise_bits(self, sender: Identity, body: threshold_sum_pb2.CoinShares) -> list[Outbound]:
        """Step 2c: every coin share; answered with step 2d, the signed flipped contribution."""
        self._from_aggregator(sender, "shares")
        return [Outbound(AGGREGATOR, "flipped", self.sign_flipped(body))]

    def partially_decrypt(self, request: threshold_sum_pb2.DecryptionRequest) -> threshold_sum_pb2.PartialDecryptions:
        self._give_up_commitments()
        return super().partially_decrypt(request)


def protocol(resources: Callable[[Identity], PartyResources]) -> RoleProtocol:
    """The party's registry entry: the aggregator's `queries` (step 1) opens a teacher's side, its `pool_request`
    an offline fill of the teacher's noise pool (kept here, per teacher, for the process's life)."""
    pools = Pools()
    powers: dict[int, PowerPool] = {}  # per teacher: its vote proofs' exponentiations, made offline

    def powers_of(own: PartyResources) -> PowerPool:
        return powers.setdefault(own.id, PowerPool(vote_proofs.proof_key(own.public_key)))

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body
                  ) -> DpppTeacherSide | DpppPoolTeacherSide:
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not open a DPPP round; the aggregator does")
        own = resources(me)
        if kind == "pool_request":
            own.check_opening(pool_opening.PROTOCOL, session_id, PoolFill.of_request(body), body.client_signature)
            return own.side(DpppPoolTeacherSide)(session_id, own, pools.of(own.id), powers_of(own), body)
        parameters = DpppParameters.from_proto(body.parameters)
        own.check_opening("dppp", session_id, parameters, body.client_signature,
                          body.features.SerializeToString(deterministic=True))
        check_key_id(own.public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        own.check_colluding(parameters.colluding)  # its own topology's c, not the opener's
        features = shared_matrix_from_proto(body.features)  # one copy per host
        if features.shape != (parameters.queries, own.features.shape[1]):
            raise invalid(f"queries are {features.shape[0]}×{features.shape[1]}; the session declares "
                          f"{parameters.queries} and the model takes {own.features.shape[1]} features")
        if not 0 < body.deadline_seconds <= MAX_DEADLINE_S:
            raise invalid(f"deadline must be in (0, {MAX_DEADLINE_S}] seconds")
        parameters.calibrate()  # each party derives N_i itself (cached per parameter set, bounded)
        parameters.check_holders_request(own.public_key)  # before any work: the holders' request fits one message
        own.admit(session_id, "dppp", parameters.guarantee())  # its own policy, before any work on its data
        side = own.side(DpppTeacherSide)(session_id, own, parameters, features, body.deadline_seconds)
        if parameters.verifiable_noise:
            side.noise_pool, side.vote_powers = pools.of(own.id), powers_of(own)
        side.charge = own.spend(session_id, "dppp", parameters.guarantee())  # before the votes leave
        return side

    return RoleProtocol("dppp", dppp_pb2.DpppMessage, frozenset({"queries", "pool_request"}), open_side,
                        (DpppTeacherSide, DpppPoolTeacherSide),
                        frozenset({"queries", "coin", "shares", "decryption_request", "stand_down", "pool_request"}))
