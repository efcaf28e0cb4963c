"""What the aggregator's side shares in every protocol whose parties vote under the threshold key (DPPP's teachers,
Hamm's parties), free of gRPC: the twin of party/voter.py on the collecting end.

COLLECTING --every ballot in, or the deadline--> the protocol's own close; with verifiable noise COLLECTING --every
commitment in, or the deadline--> REVEALING --every committed voter's coin share in--> FLIPPING --every voter's
signed flipped contribution in, or the deadline--> the protocol's own close. A committed voter that reveals no share,
or one that does not open its commitment, aborts the session (vote_proofs/joint_coin.py says why). A voter whose
proofs or signature fail is excluded by name; the session goes on if enough others contribute. The collector only
ever holds ciphertexts.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.cryptocore.proofs.membership_proof import MembershipProofInvalid
from mpdp.proto.v1 import common_pb2, threshold_sum_pb2
from mpdp.sessions.errors import ProtocolError, denied, invalid, precondition
from mpdp.sessions.identity import Identity, party
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.side import RoleSide, handles
from mpdp.threshold_sum.codec import ciphertexts_from_proto
from mpdp.threshold_sum.collector import SumCollector
from mpdp.vote_proofs import joint_coin, noise_bits, well_formed
from mpdp.vote_proofs import votes as vote_proofs
from mpdp.vote_proofs.noise_pool import Pools


class BallotCollectorSide(RoleSide):
    """A protocol's collector sets what differs: its name, the shape of a ballot, its quorum, and what it does once
    the collection closes (`_close_collection`). Its `State` enum has COLLECTING, REVEALING, FLIPPING, DONE and
    ABORTED besides its own states."""

    protocol: ClassVar[str]  # the proof contexts' and the messages' protocol name
    title: ClassVar[str]  # as errors name the protocol
    session_noun: ClassVar[str] = "session"  # what releases nothing when a coin share is missing
    voter_noun: ClassVar[str] = "parties"

    def __init__(self, session_id: str, initial: Any, parameters, public_key: ThresholdPublicKey, voters: list[int],
                 collector: SumCollector, deadline_s: float, pools: Pools | None = None):
        super().__init__(session_id, initial)
        self.identity = Identity("aggregator", 0)
        self.parameters = parameters
        self.public_key = public_key
        self.voters = list(voters)
        self.collector = collector
        self.deadline_seconds = deadline_s
        self.layout = parameters.layout(public_key.n)
        self.pools = pools  # verifiable noise with an offline pool: each voter's bits, verified when uploaded
        self.rejected_votes: dict[int, str] = {}  # voters whose vote (or noise bit) proofs failed
        self.blamed_votes: dict[int, Any] = {}  # the failing ballots as they came, for a client that repeats the check
        self.committed: dict[int, tuple[list[int], list[int], joint_coin.Entry]] = {}  # verifiable noise
        self.revealed: dict[int, bytes] = {}  # verifiable noise: coin shares, each opening its commitment
        self.flipped: dict[int, common_pb2.Ciphertexts] = {}  # verifiable noise: each voter's folded contribution
        self.evidence: dict[int, threshold_sum_pb2.WellFormed] = {}  # verifiable noise: what the holders check
        self.phase_started = 0.0

    # ------------------------------------------------------------------ what a protocol's collector sets
    @property
    def ballot_shape(self) -> tuple[int, int]:
        """(rows, width) of a proven ballot."""
        raise NotImplementedError

    @property
    def ballot_copies(self) -> int:
        """Proven votes per row of a ballot (DPPP's ensemble: T); one by default."""
        return 1

    @property
    def min_contributors(self) -> int:
        raise NotImplementedError

    def _close_collection(self) -> list[Outbound]:
        """The collection is closed: the protocol's next step (DPPP decrypts, Hamm hands the aggregate on)."""
        raise NotImplementedError

    def _lap(self, stage: str) -> None:
        """A phase ended; a protocol that reports stage times records it."""

    # ------------------------------------------------------------------ messages
    def _from_party(self, sender: Identity, kind: str) -> None:
        if sender.role != "party":
            raise denied(f"{sender} may not send {self.title} '{kind}' messages to the aggregator")

    @handles("votes")
    def collect_votes(self, sender: Identity, body) -> list[Outbound]:
        """Step 2: a voter's encrypted noisy votes, to the sum (or, with verifiable noise, its commitments)."""
        self._from_party(sender, "votes")
        self._require(self.State["COLLECTING"], "votes")
        expected = self.parameters.share_range
        if body.tosses != expected:
            raise invalid(f"party {sender.id} used a share range of {body.tosses}, the session requires {expected}")
        if self.parameters.verifiable_noise:
            return self._accept_commitments(sender.id, body)
        if self.parameters.proven_votes:
            return self._accept_proven(sender.id, body)
        self.collector.accept(sender.id, body.votes, body.signature)
        return self.poll()

    def _accept_proven(self, voter: int, body) -> list[Outbound]:
        """Step 2 with proven votes: shapes, the signature on the folded vector, then every vote proof (one per row
        and copy), then the folded vector to the sum."""
        if voter not in self.voters:
            raise denied(f"party {voter} does not contribute to this sum")
        if voter in self.rejected_votes:
            raise precondition(f"party {voter} was excluded: {self.rejected_votes[voter]}")
        if voter in self.collector.contributions:
            raise precondition(f"party {voter} already contributed (replay)")
        rows, width = self.ballot_shape
        shape = (self.public_key, self.layout, rows, width, self.parameters.share_range, body.votes, body.proven)
        # the signature on the folded vector (products: cheap) before the proofs
        self.collector.check(voter, vote_proofs.folded(*shape, self.ballot_copies), body.signature)
        try:
            folded = vote_proofs.check_and_fold(*shape, vote_proofs.context(self.protocol, self.session_id, voter),
                                                self.ballot_copies)
        except MembershipProofInvalid as error:
            return self._reject(voter, f"vote proof failed: {error}", body)
        self.collector.accept(voter, folded, body.signature, well_formed.of_proven(body.votes, body.proven))
        return self.poll()

    def _accept_commitments(self, voter: int, body) -> list[Outbound]:
        """Step 2 with verifiable noise: the guards, the vote proofs, the bits (the pool's next positions, verified
        when uploaded, or bits made in the session), the voter's signature on its commitments, then the session's
        bit proofs. What the key holders check again (vote_proofs/well_formed.py) is kept for them."""
        joint_coin.admit_commitment(voter, self.voters, self.rejected_votes, self.committed, len(body.votes.values),
                                    bytes(body.coin_commitment))
        pooled = self.pools is not None and body.pooled
        if self.pools is not None and body.pooled == bool(body.noise_bits.proofs):
            raise invalid("verifiable noise takes either pooled bits or bits made in the round, one of the two")
        p = self.parameters
        count = p.values * p.share_range
        rows, width = self.ballot_shape
        try:
            vote_values = vote_proofs.checked(self.public_key, self.layout, rows, width, body.proven,
                                              vote_proofs.context(self.protocol, self.session_id, voter),
                                              self.ballot_copies)
        except MembershipProofInvalid as error:
            return self._reject(voter, f"vote proof failed: {error}", body)
        if pooled:
            assert self.pools is not None
            try:
                spent = self.pools.of(voter).take(body.pool_first, count)
            except ProtocolError as error:
                return self._reject(voter, f"noise pool: {error}", body)
            bit_values = spent.values
            evidence = well_formed.of_pooled(self.public_key, body.proven, spent, body.signature,
                                             p.holders_check_bits)
        else:
            bit_values = ciphertexts_from_proto(self.public_key, body.noise_bits.ciphertexts, count)
            evidence = well_formed.of_commitments(body.proven, body.noise_bits, body.signature, p.holders_check_bits)
        digest = noise_bits.commitment_digest(self.public_key, vote_values, bit_values)
        try:
            self.collector.authenticate_commitment(voter, digest, body.signature)
        except ProtocolError as error:
            return self._reject(voter, f"commitments not signed: {error}", body)
        if not pooled:
            try:
                noise_bits.check(self.public_key, count, body.noise_bits,
                                 noise_bits.context(self.protocol, self.session_id, voter))
            except MembershipProofInvalid as error:
                return self._reject(voter, f"noise bit proof failed: {error}", body)
        self.committed[voter] = (vote_values, bit_values, joint_coin.Entry(voter, digest, bytes(body.coin_commitment)))
        self.evidence[voter] = evidence
        return self.poll()

    def _reject(self, voter: int, reason: str, body) -> list[Outbound]:
        self.rejected_votes[voter] = reason
        self.blamed_votes[voter] = body  # the client may repeat the check (docs/client-checks.md)
        self.collector.mark_absent(voter, reason)
        return self.poll()

    @handles("reveal")
    def collect_reveal(self, sender: Identity, body: threshold_sum_pb2.CoinReveal) -> list[Outbound]:
        """Step 2b: a committed voter's coin share. One that does not open its commitment aborts the session: it
        would otherwise choose the coin after seeing others' shares."""
        self._from_party(sender, "reveal")
        self._require(self.State["REVEALING"], "coin shares")
        entries = {voter: committed[2] for voter, committed in self.committed.items()}
        if not joint_coin.take_reveal(self.session_id, entries, self.revealed, sender.id, bytes(body.share)):
            self.fail(f"party {sender.id}'s coin share does not open its commitment: the {self.session_noun} "
                      "releases nothing")
        return self.poll()

    @handles("flipped")
    def collect_flipped(self, sender: Identity, body: threshold_sum_pb2.FlippedContribution) -> list[Outbound]:
        """Step 2d: a voter's signature on its contribution as the joint coin flipped it."""
        self._from_party(sender, "flipped")
        self._require(self.State["FLIPPING"], "flipped contributions")
        if sender.id not in self.flipped:
            raise precondition(f"party {sender.id} was sent no coin")
        self.collector.accept(sender.id, self.flipped[sender.id], body.signature, self.evidence[sender.id])
        return self.poll()

    def _ask_reveals(self) -> list[Outbound]:
        """Step 2b: every commitment is fixed; each committed voter gets every entry and then reveals its share."""
        if len(self.committed) < self.min_contributors:
            self.fail(f"insufficient noise: {len(self.committed)} of {len(self.voters)} {self.voter_noun} committed, "
                      f"need {self.min_contributors}")
        self._advance(self.State["COLLECTING"], self.State["REVEALING"], "asking for coin shares")
        self.phase_started = time.monotonic()
        self._lap("collect_votes")
        message = joint_coin.entries_to_proto(self._entries())
        return [Outbound(party(v), "coin", message) for v in sorted(self.committed)]

    def _flip(self) -> list[Outbound]:
        """Step 2c: the joint coin over every entry and share; each voter's bits flipped and folded here, and every
        share to each, which folds, signs and sends back its contribution (step 2d)."""
        coin = joint_coin.coin(self.session_id, self._entries(), self.revealed)
        p = self.parameters
        rows, width = self.ballot_shape
        for voter, (vote_values, bit_values, _) in self.committed.items():
            coins = noise_bits.coin_bits(coin, voter, len(bit_values))
            self.flipped[voter] = noise_bits.fold(self.public_key, self.layout, rows, width, p.share_range,
                                                  vote_values, bit_values, coins, self.ballot_copies)
        self._advance(self.State["REVEALING"], self.State["FLIPPING"], "drawing the joint coin")
        self.phase_started = time.monotonic()
        self._lap("reveal_coin")
        message = joint_coin.shares_to_proto(self.revealed)
        return [Outbound(party(v), "shares", message) for v in sorted(self.committed)]

    def _entries(self) -> list[joint_coin.Entry]:
        return [self.committed[v][2] for v in sorted(self.committed)]

    def _with_coin(self, request: threshold_sum_pb2.DecryptionRequest) -> threshold_sum_pb2.DecryptionRequest:
        """With verifiable noise the holders recompute the coin and every flip: the entries and shares go along."""
        if self.parameters.verifiable_noise:
            request.coin_entries.CopyFrom(joint_coin.entries_to_proto(self._entries()))
            request.coin_shares.CopyFrom(joint_coin.shares_to_proto(self.revealed))
        return request

    def poll(self) -> list[Outbound]:
        """The collecting phases' next step, once everyone expected has answered."""
        if self.state is self.State["COLLECTING"] and self.parameters.verifiable_noise:
            if len(self.committed) + len(self.collector.absent) >= len(self.voters):
                return self._ask_reveals()
            return []
        if self.state is self.State["REVEALING"] and len(self.revealed) == len(self.committed):
            return self._flip()
        if self.state in (self.State["COLLECTING"], self.State["FLIPPING"]) and self.collector.all_in:
            return self._close_collection()
        return []

    # ------------------------------------------------------------------ events
    def on_deadline(self) -> list[Outbound]:
        """Each collecting phase waits one deadline; then it goes on with who answered (or aborts)."""
        if self.state is self.State["COLLECTING"]:
            if self.parameters.verifiable_noise:
                return self._ask_reveals()
            silent = set(self.voters) - set(self.collector.contributions) - set(self.collector.absent)
            for voter in sorted(silent):  # named, so a failed close says the deadline, not only a count
                self.collector.mark_absent(voter, f"no vote within the session's deadline of "
                                           f"{self.deadline_seconds:g} s (the client's --deadline)")
            return self._close_collection()
        if self.state is self.State["REVEALING"]:
            if time.monotonic() - self.phase_started < self.deadline_seconds:
                return []  # a tick queued while the commitments were checked: the reveals get a whole deadline
            missing = sorted(set(self.committed) - set(self.revealed))
            self.fail(f"parties {missing} revealed no coin share by the deadline: the {self.session_noun} "
                      "releases nothing")
        if self.state is self.State["FLIPPING"]:
            if time.monotonic() - self.phase_started < self.deadline_seconds:
                return []  # a tick queued while the commitments were checked: the flips get a whole deadline
            for voter in self.flipped:
                self.collector.mark_absent(voter, "sent no flipped contribution by the deadline")
            return self._close_collection()
        return super().on_deadline()

    def on_undeliverable(self, to: Identity, kind: str, reason: str) -> list[Outbound]:
        """A voter the queries or the shares could not reach is absent; one that cannot get the coin entries
        aborts the session (it could not reveal)."""
        if kind == "coin" and self.state is self.State["REVEALING"]:
            self.fail(f"party {to.id} cannot reveal its coin share: the {self.session_noun} releases nothing")
        if kind in ("queries", "shares"):
            self.collector.mark_absent(to.id, reason)
        return self.poll()

    def _forget(self) -> None:
        self.collector.forget()
        self.blamed_votes.clear()
        self.committed.clear()
        self.revealed.clear()
        self.flipped.clear()
        self.evidence.clear()
