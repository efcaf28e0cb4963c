"""What a voter's side shares in every protocol whose parties vote under the threshold key and then decrypt the
aggregate as key holders (DPPP's teachers, Hamm's parties), free of gRPC.

VOTING --queries--> VOTED --decryption_request--> DONE (a voter without a key share is DONE once it has voted);
with verifiable noise VOTING --queries--> COMMITTED --coin--> REVEALED --shares--> VOTED; any state --abort-->
ABORTED. Only the voter's encrypted noisy votes and its proven partial decryptions leave
it. A voter that misses the session ends quietly: both protocols tolerate dropouts. The plaintext votes and noise
it drew are kept for the test record only in test mode (`mpdp serve --test-mode`, `PartyResources.test_mode`);
otherwise they are gone once the votes are encrypted.
"""

from __future__ import annotations

import enum
import secrets
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.proofs.precomputed_powers import PowerPool
from mpdp.proto.v1 import common_pb2, threshold_sum_pb2
from mpdp.sessions.errors import denied, invalid, precondition
from mpdp.sessions.identity import AGGREGATOR, CLIENT, Identity
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.side import RoleSide, handles
from mpdp.threshold_sum.binding import SumSlot, commitment_signature_for, proofs_of, proofs_signature_for
from mpdp.threshold_sum.context import proof_context
from mpdp.vote_proofs import joint_coin, noise_bits, well_formed
from mpdp.vote_proofs import votes as vote_proofs
from mpdp.vote_proofs.noise_pool import NoisePool
from party import proven_ballot
from party.charge import Charged
from party.key_holder import proven_partials, signed
from party.resources import PartyResources


class State(enum.Enum):
    VOTING = "voting"
    COMMITTED = "committed"  # verifiable noise: bits and coin share committed, waiting for every entry
    REVEALED = "revealed"  # verifiable noise: coin share revealed, waiting for everyone's
    VOTED = "voted"
    DONE = "done"
    ABORTED = "aborted"


@dataclass
class Drawn:  # test mode only; never printed
    votes: np.ndarray = field(repr=False)
    noise: np.ndarray = field(repr=False)


@dataclass
class Commitments:
    """Verifiable noise: what the voter committed to, kept until the joint coin flips it."""
    votes: np.ndarray = field(repr=False)
    bits: np.ndarray = field(repr=False)  # slots × N_i
    vote_values: list[int] = field(repr=False)
    bit_values: list[int] = field(repr=False)
    digest: bytes
    coin_share: bytes = field(repr=False)
    entries: list[joint_coin.Entry] = field(default_factory=list)

    def entry(self, session_id: str, holder: int) -> joint_coin.Entry:
        return joint_coin.Entry(holder, self.digest, joint_coin.commitment(session_id, holder, self.coin_share))


class VoterSide(Charged, RoleSide):
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
        self.commitments: Commitments | None = None
        self.noise_pool: NoisePool | None = None  # verifiable noise: this voter's committed bits made offline
        self.vote_powers: PowerPool | None = None  # verifiable noise: its vote proofs' exponentiations, made offline

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
    def ballot_copies(self) -> int:
        """Proven votes per row of a ballot (DPPP's ensemble: T); one by default."""
        return 1

    def proven_slots(self, votes: np.ndarray) -> np.ndarray:
        """The one-hot (or bit) votes a proven ballot proves, `ballot_copies` per row, row-major; their sum per row
        is `votes`."""
        return votes

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
            ballot = proven_ballot.cast(self.own, self.protocol, self.session_id, parameters, rows, width,
                                        self.proven_slots(votes), noise, self.ballot_copies, self._prove_votes)
            message = self.votes_message(tosses=parameters.share_range, proven=ballot.proven, votes=ballot.noise,
                                         signature=ballot.signature, proofs_signature=self._sign_proofs(ballot.proven))
        else:
            ciphertexts = self._encrypt(self._cast(votes, noise))
            message = self.votes_message(tosses=parameters.share_range,
                                         votes=common_pb2.Ciphertexts(key_id=public_key.key_id, values=ciphertexts),
                                         signature=signed(self.own, self.slot, public_key.key_id, ciphertexts))
        # An abort that arrived while voting wins: nothing is released and the session stays aborted.
        self._advance(State.VOTING, State.VOTED if self.own.key_share is not None else State.DONE, "releasing votes")
        self._release()  # the encrypted noisy votes leave: the charge stays (or a refund came first: they do not)
        if self.own.test_mode:
            self.drawn = Drawn(votes, noise)
        return message

    def _prove_votes(self, layout, slots: np.ndarray) -> common_pb2.ProvenVotes:
        """Each row's one-hot (or bit) votes encrypted at their packed slots, each with its membership proof."""
        return vote_proofs.cast(self.own.public_key, layout, slots,
                                vote_proofs.context(self.protocol, self.session_id, self.own.id),
                                copies=self.ballot_copies)

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
        try:
            partials = proven_partials(self.own, request, self.slot, self.voters, self.min_contributors,
                                       p.layout(self.own.public_key.n).plaintexts_needed(p.values),
                                       proof_context(self.protocol, self.session_id),
                                       self._check_well_formed if p.proven_votes else None)
        except well_formed.NotWellFormed as error:
            self.fail(f"{error}: key holder {self.own.id} decrypts nothing and the session releases nothing")
        self._advance(State.VOTED, State.DONE, "releasing partial decryptions")  # not aborted meanwhile
        self._release()
        return partials

    def _check_well_formed(self, request: threshold_sum_pb2.DecryptionRequest) -> None:
        """Every contribution's proofs, commitments and fold, again, here (vote_proofs/well_formed.py): an
        aggregator colluding with a voter could have skipped them."""
        p, public_key = self.parameters, self.own.public_key
        rows, width = self.ballot_shape
        ballots = well_formed.Ballots(self.protocol, self.session_id, p.layout(public_key.n), rows, width,
                                      p.share_range, p.verifiable_noise, p.holders_check_bits, self.ballot_copies)
        well_formed.check(public_key, ballots, self.slot, self.own.contribution_keys, request, self.voters)

    def _sign_proofs(self, *proofs: common_pb2.ProvenVotes) -> threshold_sum_pb2.ContributionSignature:
        """The voter's signature on its proofs as sent: a blame resting on them is then shown to be its own."""
        return proofs_signature_for(self.own.contribution_keys, self.slot, self.own.id, self.own.public_key.key_id,
                                    proofs_of(*proofs))

    # ------------------------------------------------------------------ verifiable noise (docs/malicious-party.md)
    def _noise_bits(self, votes: np.ndarray, tosses: int) -> np.ndarray:
        """Fresh bits from `secrets`, slots × N_i."""
        count = votes.size * tosses
        stream = np.frombuffer(secrets.token_bytes((count + 7) // 8), dtype=np.uint8)
        return np.unpackbits(stream)[:count].astype(np.int64).reshape(votes.size, tosses)

    def commit_noise(self, votes: np.ndarray) -> dict:
        """Step 2 with verifiable noise: proven votes, N_i committed bits per slot (the pool's next positions, or
        made here when the pool runs short: slower, the same guarantee) and a commitment to a secret coin share.
        Returns the votes message's fields."""
        p, public_key = self.parameters, self.own.public_key
        layout, tosses = p.layout(public_key.n), p.share_range
        proven = vote_proofs.cast(public_key, layout, self.proven_slots(votes),
                                  vote_proofs.context(self.protocol, self.session_id, self.own.id), self.vote_powers,
                                  self.ballot_copies)
        fields: dict = {"proven": proven}
        spent = self.noise_pool.take_next(votes.size * tosses) if self.noise_pool is not None else None
        if spent is not None:
            bits = np.array(spent.bits, dtype=np.int64).reshape(votes.size, tosses)
            bit_values = spent.values
            fields.update(pooled=True, pool_first=spent.first)
        else:
            bits = self._noise_bits(votes, tosses)
            committed, bit_values = self._commit_bits(bits)
            fields["noise_bits"] = committed
        vote_values = [int.from_bytes(v, "big") for v in proven.ciphertexts.values]
        self.commitments = Commitments(votes, bits, vote_values, bit_values,
                                       noise_bits.commitment_digest(public_key, vote_values, bit_values),
                                       joint_coin.draw_share())
        fields["coin_commitment"] = self.commitments.entry(self.session_id, self.own.id).coin_commitment
        # signed before the coin exists: the key holders check the coin flipped these commitments and no others
        fields["signature"] = commitment_signature_for(self.own.contribution_keys, self.slot, self.own.id,
                                                       public_key.key_id, self.commitments.digest)
        fields["proofs_signature"] = self._sign_proofs(proven, fields.get("noise_bits", common_pb2.ProvenVotes()))
        self._advance(State.VOTING, State.COMMITTED, "committing to votes and noise bits")
        self._release()  # the encrypted votes and noise bits leave, to be flipped into the contribution
        return fields

    def _commit_bits(self, bits: np.ndarray) -> tuple[common_pb2.ProvenVotes, list[int]]:
        """The bits made in the session encrypted, each with its bit proof; and the ciphertexts as integers."""
        return noise_bits.commit(self.own.public_key, bits, noise_bits.context(self.protocol, self.session_id,
                                                                               self.own.id))

    def reveal_coin_share(self, body: threshold_sum_pb2.CoinCommitments) -> threshold_sum_pb2.CoinReveal:
        """Step 2b: every committed voter's entry, its own among them as it sent it; kept, then the share revealed."""
        self._require(State.COMMITTED, "revealing a coin share")
        mine = self.commitments
        assert mine is not None
        entries = joint_coin.entries_from_proto(body, self.voters)
        if mine.entry(self.session_id, self.own.id) not in entries:
            raise invalid("the coin leaves out this voter's commitments as it sent them")
        mine.entries = entries
        self._advance(State.COMMITTED, State.REVEALED, "revealing a coin share")
        return threshold_sum_pb2.CoinReveal(share=mine.coin_share)

    def sign_flipped(self, body: threshold_sum_pb2.CoinShares) -> threshold_sum_pb2.FlippedContribution:
        """Step 2c: every share, each opening the entry this voter kept; the coin, its bits flipped and folded as
        the aggregator folds them, and its signature on that contribution."""
        self._require(State.REVEALED, "flipping noise bits")
        mine = self.commitments
        assert mine is not None
        shares = joint_coin.shares_from_proto(body, self.voters)
        try:
            seed = joint_coin.coin(self.session_id, mine.entries, shares)
        except joint_coin.RevealMismatch as error:
            raise invalid(f"{error}: this voter signs no contribution") from None
        p, public_key = self.parameters, self.own.public_key
        rows, width = self.ballot_shape
        coins = self._coins(seed, mine.bits.size)
        folded = noise_bits.fold(public_key, p.layout(public_key.n), rows, width, p.share_range, mine.vote_values,
                                 mine.bit_values, coins, self.ballot_copies)
        signature = signed(self.own, self.slot, public_key.key_id, list(folded.values))
        self._advance(State.REVEALED, State.VOTED if self.own.key_share is not None else State.DONE, "releasing votes")
        if self.own.test_mode:  # the share the coin made of its bits, for the test record only
            self.drawn = Drawn(mine.votes, noise_bits.flipped_shares(mine.bits, coins).reshape(mine.votes.shape))
        self.commitments = None
        return threshold_sum_pb2.FlippedContribution(signature=signature)

    def _coins(self, seed: bytes, count: int) -> np.ndarray:
        """This voter's flips: its bits of the joint coin."""
        return noise_bits.coin_bits(seed, self.own.id, count)

    def _give_up_commitments(self) -> None:
        """The round went on without this voter's commitments (excluded, or no coin by the deadline): it still
        serves as a key holder."""
        if self.state in (State.COMMITTED, State.REVEALED) and self.own.key_share is not None:
            self._advance(self.state, State.VOTED, "going on as a key holder")
            self.commitments = None

    def test_record(self) -> tuple[str, object] | None:
        if self.drawn is None:
            return None
        return "test_record", self.test_record_message(votes=self.drawn.votes.ravel().tolist(),
                                                       noise=self.drawn.noise.ravel().tolist())
