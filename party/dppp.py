"""A teacher's (and key holder's) side of a DPPP round (dppp.md steps 2 and 5), free of gRPC: a voter
(party/voter.py) that also takes `stand_down` (VOTED --stand_down--> DONE) and, with verifiable noise, the joint
coin (VOTING --queries--> COMMITTED --coin--> VOTED, or DONE without a key share)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from mpdp.cryptocore import ciphertext as ct
from mpdp.cryptocore.key_checks import check_key_id
from mpdp.proto.v1 import dppp_pb2, threshold_sum_pb2
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.protocols.dppp.reference import one_hot
from mpdp.sessions.errors import denied, invalid
from mpdp.sessions.identity import AGGREGATOR, Identity
from mpdp.sessions.matrices import shared_matrix_from_proto
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import handles
from mpdp.threshold_sum.binding import SumSlot
from mpdp.vote_proofs import noise_bits
from mpdp.vote_proofs import votes as vote_proofs
from party.key_holder import signed
from party.resources import PartyResources
from party.voter import Drawn, State, VoterSide

MAX_DEADLINE_S = 3600.0


@dataclass
class Commitments:
    """Verifiable noise: what the teacher committed to in step 2, kept until the coin flips it."""
    votes: np.ndarray = field(repr=False)
    bits: np.ndarray = field(repr=False)  # slots × N_i
    vote_values: list[int] = field(repr=False)
    bit_values: list[int] = field(repr=False)
    digest: bytes
    coin_share: bytes


class DpppTeacherSide(VoterSide):
    """Step 2 (the votes; with verifiable noise 2a–2c: commitments, then the joint coin's flipped contribution)
    and step 5 (partial decryptions, for the aggregator); `stand_down` when t other holders' shares sufficed."""

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
        # first, then everyone left); with verifiable noise one more for the flipped contributions.
        self.deadline_seconds = (4 if parameters.verifiable_noise else 3) * round_deadline_s + 30
        self.commitments: Commitments | None = None

    @property
    def participants(self) -> list[Identity]:
        return [AGGREGATOR]

    def votes(self) -> np.ndarray:
        """Step 2: f_i(x_q), one-hot."""
        predictions = np.asarray(self.own.model.predict(self.features), dtype=int)
        if self.own.fault == "noise-skew":  # test mode only: every label pushed to the next class
            predictions = (predictions + 1) % self.parameters.classes
        return one_hot(predictions, self.parameters.classes)

    def cast_votes(self) -> dppp_pb2.DpppVotes:
        """Step 2; with verifiable noise, commitments to the votes and to the noise bits (`_commit`)."""
        if not self.parameters.verifiable_noise:
            return super().cast_votes()
        self._require(State.VOTING, "voting")
        return self._commit(self.votes())

    def _draw_noise(self, votes: np.ndarray) -> np.ndarray:
        if self.own.fault == "noise-skew":  # test mode only: the whole share range on its class, none elsewhere
            return votes * self.parameters.share_range
        return super()._draw_noise(votes)

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
        self._give_up_commitments()
        self._advance(State.VOTED, State.DONE, "standing down")
        return []

    @handles("coin")
    def flip_noise_bits(self, sender: Identity, body: dppp_pb2.DpppCoin) -> list[Outbound]:
        """Step 2b: the joint coin, answered with step 2c."""
        self._from_aggregator(sender, "coin")
        return [Outbound(AGGREGATOR, "flipped", self.sign_flipped(body))]

    def partially_decrypt(self, request: threshold_sum_pb2.DecryptionRequest) -> threshold_sum_pb2.PartialDecryptions:
        self._give_up_commitments()
        return super().partially_decrypt(request)

    def _commit(self, votes: np.ndarray) -> dppp_pb2.DpppVotes:
        """Step 2 with verifiable noise: proven votes, N_i committed bits per slot with bit proofs, a coin share."""
        p, public_key = self.parameters, self.own.public_key
        layout, tosses = p.layout(public_key.n), p.share_range
        stream = np.frombuffer(secrets.token_bytes((votes.size * tosses + 7) // 8), dtype=np.uint8)
        bits = np.unpackbits(stream)[:votes.size * tosses].astype(np.int64).reshape(votes.size, tosses)
        if self.own.fault == "noise-skew":  # ones where it votes, zeros elsewhere: shares N_i and 0 if unflipped
            bits = np.repeat(votes.reshape(-1, 1), tosses, axis=1).astype(np.int64)
        proven = vote_proofs.cast(public_key, layout, votes, vote_proofs.context("dppp", self.session_id, self.own.id))
        committed, bit_values = noise_bits.commit(public_key, layout, bits, noise_bits.context(self.session_id, self.own.id))
        if self.own.fault == "noise-bit-bad":  # test mode only: a bit of 2 under a bit proof
            committed = noise_bits.tampered_bit(public_key, committed)
            bit_values = [int.from_bytes(v, "big") for v in committed.ciphertexts.values]
        share = secrets.token_bytes(noise_bits.COIN_SHARE_BYTES)
        self.commitments = Commitments(votes, bits, [int.from_bytes(v, "big") for v in proven.ciphertexts.values],
                                       bit_values, noise_bits.commitment_digest(proven, committed), share)
        self._advance(State.VOTING, State.COMMITTED, "committing to votes and noise bits")
        return dppp_pb2.DpppVotes(tosses=tosses, proven=proven, noise_bits=committed, coin_share=share)

    def sign_flipped(self, coin: dppp_pb2.DpppCoin) -> dppp_pb2.DpppFlipped:
        """Step 2c: the coin from every committed teacher's entry (its own among them, as it sent it), its bits
        flipped and folded as the aggregator folds them, and its signature on that contribution."""
        p, public_key = self.parameters, self.own.public_key
        self._require(State.COMMITTED, "flipping noise bits")
        mine = self.commitments
        assert mine is not None
        entries = noise_bits.committed_from_proto(coin, p.teachers)
        if noise_bits.Committed(self.own.id, mine.digest, mine.coin_share) not in entries:
            raise invalid("the coin leaves out this teacher's commitments as it sent them")
        seed = noise_bits.joint_coin(self.session_id, entries)
        coins = noise_bits.coin_bits(seed, self.own.id, mine.bits.size)
        folded = noise_bits.fold(public_key, p.layout(public_key.n), p.queries, p.classes, p.share_range,
                                 mine.vote_values, mine.bit_values, coins)
        signature = signed(self.own, SumSlot.of("dppp", self.session_id, p), public_key.key_id, list(folded.values))
        self._advance(State.COMMITTED, State.VOTED if self.own.key_share is not None else State.DONE, "releasing votes")
        if self.own.test_mode:  # the share the coin made of its bits, for the test record only
            self.drawn = Drawn(mine.votes, noise_bits.flipped_shares(mine.bits, coins).reshape(mine.votes.shape))
        self.commitments = None
        return dppp_pb2.DpppFlipped(signature=signature)

    def _give_up_commitments(self) -> None:
        """The round went on without this teacher's commitments (excluded, or no coin by the deadline): it still
        serves as a key holder."""
        if self.state is State.COMMITTED and self.own.key_share is not None:
            self._advance(State.COMMITTED, State.VOTED, "going on as a key holder")
            self.commitments = None



def protocol(resources: Callable[[Identity], PartyResources]) -> RoleProtocol:
    """The party's registry entry: the aggregator's `queries` (step 1) opens a teacher's side."""

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body) -> DpppTeacherSide:
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not open a DPPP round; the aggregator does")
        own = resources(me)
        parameters = DpppParameters.from_proto(body.parameters)
        check_key_id(own.public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        own.check_colluding(parameters.colluding)  # its own topology's c, not the opener's
        features = shared_matrix_from_proto(body.features)  # one copy per host
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
                        frozenset({"queries", "coin", "decryption_request", "stand_down"}))
