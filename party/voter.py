"""What a voter's side shares in every protocol whose parties vote under the threshold key and then decrypt the
aggregate as key holders (DPPP's teachers, Hamm's parties), free of gRPC.

VOTING --queries--> VOTED --decryption_request--> DONE (a voter without a key share is DONE once it has voted);
any state --abort--> ABORTED. Only the voter's encrypted noisy votes and its proven partial decryptions leave
it. A voter that misses the session ends quietly: both protocols tolerate dropouts. The plaintext votes and noise
it drew are kept for the test record only in test mode (`mpdp serve --test-mode`, `PartyResources.test_mode`);
otherwise they are gone once the votes are encrypted.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from mpdp.cryptocore import ciphertext as ct
from mpdp.proto.v1 import common_pb2, threshold_sum_pb2
from mpdp.sessions.errors import denied, precondition
from mpdp.sessions.identity import AGGREGATOR, CLIENT, Identity
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.side import RoleSide, handles
from mpdp.threshold_sum.binding import SumSlot
from mpdp.threshold_sum.context import proof_context
from party import proven_ballot
from party.key_holder import proven_partials, signed
from party.resources import PartyResources


class State(enum.Enum):
    VOTING = "voting"
    COMMITTED = "committed"  # DPPP's verifiable noise: bits committed, waiting for the joint coin
    VOTED = "voted"
    DONE = "done"
    ABORTED = "aborted"


@dataclass
class Drawn:  # test mode only; never printed
    votes: np.ndarray = field(repr=False)
    noise: np.ndarray = field(repr=False)


class VoterSide(RoleSide):
    """A protocol's voter sets what differs: its name and messages, who it sends partial decryptions to, the
    shape of a ballot and the votes its model casts."""

    State = State
    announce_abort = False
    protocol: ClassVar[str]
    votes_message: ClassVar[Any]  # the protocol's votes message: tosses, votes, signature, proven
    test_record_message: ClassVar[Any]  # votes and noise, flattened
    decrypts_for: ClassVar[Identity]  # who combines the partial decryptions

    def __init__(self, session_id: str, own: PartyResources, parameters, features: np.ndarray):
        super().__init__(session_id, State.VOTING)
        self.identity = Identity("party", own.id)
        self.own = own
        self.parameters = parameters
        self.features = features
        self.drawn: Drawn | None = None

    # ------------------------------------------------------------------ what a protocol's voter sets
    def votes(self) -> np.ndarray:
        """This voter's plaintext votes on the queries, one row per query (point)."""
        raise NotImplementedError

    @property
    def ballot_shape(self) -> tuple[int, int]:
        """(rows, width) of a proven ballot."""
        raise NotImplementedError

    @property
    def voters(self) -> int:
        raise NotImplementedError

    @property
    def min_contributors(self) -> int:
        raise NotImplementedError

    # ------------------------------------------------------------------ shared
    @property
    def slot(self) -> SumSlot:
        return SumSlot.of(self.protocol, self.session_id, self.parameters)

    def may_abort(self, sender: Identity) -> bool:
        return sender in self.participants or sender == CLIENT

    @staticmethod
    def _from_aggregator(sender: Identity, kind: str) -> None:
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not send '{kind}' to a voter")

    @handles("queries")
    def vote_on_queries(self, sender: Identity, body) -> list[Outbound]:
        self._from_aggregator(sender, "queries")
        return [Outbound(AGGREGATOR, "votes", self.cast_votes())]

    @handles("decryption_request")
    def decrypt_aggregate(self, sender: Identity, body) -> list[Outbound]:
        self._from_aggregator(sender, "decryption_request")
        return [Outbound(self.decrypts_for, "partial_decryptions", self.partially_decrypt(body))]

    def cast_votes(self):
        """Enc(vote + noise share) for every query (point) and class, packed, fresh; or, with proven votes,
        Enc(noise share) packed and per row Enc(one-hot vote) with its proof."""
        self._require(State.VOTING, "voting")
        parameters, public_key = self.parameters, self.own.public_key
        votes = self.votes()
        noise = self._draw_noise(votes)
        if parameters.proven_votes:
            rows, width = self.ballot_shape
            ballot = proven_ballot.cast(self.own, self.protocol, self.session_id, parameters, rows, width, votes, noise)
            message = self.votes_message(tosses=parameters.share_range, proven=ballot.proven, votes=ballot.noise,
                                         signature=ballot.signature)
        else:
            ciphertexts = self._encrypt(self._cast(votes, noise))
            message = self.votes_message(tosses=parameters.share_range,
                                         votes=common_pb2.Ciphertexts(key_id=public_key.key_id, values=ciphertexts),
                                         signature=signed(self.own, self.slot, public_key.key_id, ciphertexts))
        # An abort that arrived while voting wins: nothing is released and the session stays aborted.
        self._advance(State.VOTING, State.VOTED if self.own.key_share is not None else State.DONE, "releasing votes")
        if self.own.test_mode:
            self.drawn = Drawn(votes, noise)
        return message

    def _draw_noise(self, votes: np.ndarray) -> np.ndarray:
        """This voter's noise share per slot, fresh from the parameters' distribution."""
        return np.array(self.parameters.draw_shares(votes.size), dtype=np.int64).reshape(votes.shape)

    def _cast(self, votes: np.ndarray, noise: np.ndarray) -> np.ndarray:
        return votes + noise

    def _encrypt(self, cast: np.ndarray) -> list[bytes]:
        public_key = self.own.public_key
        plaintexts = self.parameters.layout(public_key.n).pack(cast.ravel().tolist())
        return [ct.to_bytes(public_key.paillier, public_key.encryptor.encrypt(p)) for p in plaintexts]

    def partially_decrypt(self, request: threshold_sum_pb2.DecryptionRequest) -> threshold_sum_pb2.PartialDecryptions:
        """Check the request before any work, then one proven partial decryption per ciphertext."""
        if self.own.key_share is None:
            raise precondition(f"party {self.own.id} holds no key share")
        self._require(State.VOTED, "partial decryption")
        p = self.parameters
        partials = proven_partials(self.own, request, self.slot, self.voters, self.min_contributors,
                                   p.layout(self.own.public_key.n).plaintexts_needed(p.values),
                                   proof_context(self.protocol, self.session_id))
        self._advance(State.VOTED, State.DONE, "releasing partial decryptions")  # not aborted meanwhile
        return partials

    def test_record(self) -> tuple[str, object] | None:
        if self.drawn is None:
            return None
        return "test_record", self.test_record_message(votes=self.drawn.votes.ravel().tolist(),
                                                       noise=self.drawn.noise.ravel().tolist())
