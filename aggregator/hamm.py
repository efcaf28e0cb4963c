"""The aggregator's side of a Hamm session (hamm.md steps 1–3), free of gRPC.

COLLECTING --all votes in, or the deadline--> HANDED_ON --the deadline again--> DONE; any --abort--> ABORTED.
With verifiable noise (as DPPP's, aggregator/dppp.py): COLLECTING --all commitments in, or the deadline-->
REVEALING --every committed party's coin share in--> FLIPPING --every signed flipped contribution in, or the
deadline--> HANDED_ON; a committed party that reveals no share, or one that does not open its commitment, aborts
the session.
While HANDED_ON it tells Charlie about a key holder the request could not reach. It forwards Charlie's public
X_aux to every party, sums the encrypted votes (a threshold sum), and hands the identical aggregate to
every key holder and to Charlie. The key holders answer Charlie, not the aggregator, so the aggregator
never holds more than ciphertexts: the counts go to Charlie and to no one else.
"""

from __future__ import annotations

import enum
import time

from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.cryptocore.proofs.membership_proof import MembershipProofInvalid
from mpdp.proto.v1 import common_pb2, hamm_pb2, threshold_sum_pb2
from mpdp.protocols.hamm.parameters import HammParameters
from mpdp.sessions.errors import Kind, ProtocolError, aborted, denied, invalid, precondition
from mpdp.sessions.identity import CLIENT, CURATOR, Identity, party
from mpdp.sessions.matrices import matrix_from_proto
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import RoleSide, handles
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot
from mpdp.threshold_sum.codec import ciphertexts_from_proto
from mpdp.threshold_sum.collector import SumCollector
from mpdp.vote_proofs import joint_coin, noise_bits, well_formed
from mpdp.vote_proofs import votes as vote_proofs

MAX_DEADLINE_S = 3600.0


class State(enum.Enum):
    COLLECTING = "collecting votes"
    REVEALING = "collecting coin shares"
    FLIPPING = "flipping noise bits"
    HANDED_ON = "aggregate handed on"
    DONE = "done"
    ABORTED = "aborted"


class HammAggregatorSide(RoleSide):
    State = State

    def __init__(self, session_id: str, parameters: HammParameters, queries: hamm_pb2.HammQueries,
                 public_key: ThresholdPublicKey, voters: list[int], key_holders: list[int],
                 keys: ContributionKeys | None = None):
        super().__init__(session_id, State.COLLECTING)
        self.identity = Identity("aggregator", 0)
        self.parameters = parameters
        self.queries = queries
        self.deadline_seconds = queries.deadline_seconds
        self.public_key = public_key
        self.voters = list(voters)
        self.key_holders = list(key_holders)
        layout = parameters.layout(public_key.n)
        self.collector = SumCollector(public_key, voters, layout.plaintexts_needed(parameters.values),
                                      parameters.min_contributors, SumSlot.of("hamm", session_id, parameters), keys)
        self._forwarded = False
        self.rejected_votes: dict[int, str] = {}  # voters whose vote proofs failed
        self.committed: dict[int, tuple[list[int], list[int], joint_coin.Entry]] = {}  # verifiable noise
        self.revealed: dict[int, bytes] = {}
        self.flipped: dict[int, common_pb2.Ciphertexts] = {}
        self.evidence: dict[int, threshold_sum_pb2.WellFormed] = {}  # verifiable noise: what the holders check
        self.phase_started = 0.0

    @property
    def participants(self) -> list[Identity]:
        return [CURATOR] + [party(number) for number in sorted(set(self.voters) | set(self.key_holders))]

    def may_abort(self, sender: Identity) -> bool:
        return sender in (CURATOR, CLIENT)  # a party that leaves is a dropout, not the end of the session

    @handles("votes")
    def collect_votes(self, sender: Identity, body: hamm_pb2.HammVotes) -> list[Outbound]:
        """Step 2: a party's encrypted votes, to the sum."""
        if sender.role != "party":
            raise denied(f"{sender} may not send Hamm 'votes' messages to the aggregator")
        self._require(State.COLLECTING, "votes")
        if body.tosses != self.parameters.share_range:
            raise invalid(f"party {sender.id} used a share range of {body.tosses}, the session requires "
                          f"{self.parameters.share_range}")
        if self.parameters.verifiable_noise:
            return self._accept_commitments(sender.id, body)
        if self.parameters.proven_votes:
            return self._accept_proven(sender.id, body)
        self.collector.accept(sender.id, body.votes, body.signature)
        return self.poll()

    def _accept_proven(self, voter: int, body: hamm_pb2.HammVotes) -> list[Outbound]:
        """Step 2 with proven votes: shapes, the signature on the folded vector, then every vote proof, then the
        folded vector to the sum. A voter whose proofs fail is excluded by name; the session goes on if enough
        others contribute."""
        if voter not in self.voters:
            raise denied(f"party {voter} does not contribute to this sum")
        if voter in self.rejected_votes:
            raise precondition(f"party {voter} was excluded: {self.rejected_votes[voter]}")
        if voter in self.collector.contributions:
            raise precondition(f"party {voter} already contributed (replay)")
        p = self.parameters
        shape = (self.public_key, p.layout(self.public_key.n), p.aux_points, p.vote_width, p.share_range, body.votes,
                 body.proven)
        # the signature on the folded vector (products: cheap) before the proofs
        self.collector.check(voter, vote_proofs.folded(*shape), body.signature)
        try:
            folded = vote_proofs.check_and_fold(*shape, vote_proofs.context("hamm", self.session_id, voter))
        except MembershipProofInvalid as error:
            self.rejected_votes[voter] = f"vote proof failed: {error}"
            self.collector.mark_absent(voter, self.rejected_votes[voter])
            return self.poll()
        self.collector.accept(voter, folded, body.signature, well_formed.of_proven(body.votes, body.proven))
        return self.poll()

    def _accept_commitments(self, voter: int, body: hamm_pb2.HammVotes) -> list[Outbound]:
        """Step 2 with verifiable noise: the guards, the vote proofs, the voter's signature on its commitments, then
        the bit proofs. A voter whose signature or proofs fail is excluded by name; the session goes on if enough
        others contribute. What the key holders check again (vote_proofs/well_formed.py) is kept for them."""
        joint_coin.admit_commitment(voter, self.voters, self.rejected_votes, self.committed, len(body.votes.values),
                                    bytes(body.coin_commitment))
        p = self.parameters
        count = p.values * p.share_range
        try:
            vote_values = vote_proofs.checked(self.public_key, p.layout(self.public_key.n), p.aux_points,
                                              p.vote_width, body.proven, vote_proofs.context("hamm", self.session_id, voter))
        except MembershipProofInvalid as error:
            return self._reject(voter, f"vote proof failed: {error}")
        bit_values = ciphertexts_from_proto(self.public_key, body.noise_bits.ciphertexts, count)
        digest = noise_bits.commitment_digest(self.public_key, vote_values, bit_values)
        try:
            self.collector.authenticate_commitment(voter, digest, body.signature)
        except ProtocolError as error:
            return self._reject(voter, f"commitments not signed: {error}")
        try:
            noise_bits.check(self.public_key, count, body.noise_bits, noise_bits.context("hamm", self.session_id, voter))
        except MembershipProofInvalid as error:
            return self._reject(voter, f"noise bit proof failed: {error}")
        self.committed[voter] = (vote_values, bit_values, joint_coin.Entry(voter, digest, bytes(body.coin_commitment)))
        self.evidence[voter] = well_formed.of_commitments(body.proven, body.noise_bits, body.signature,
                                                 p.holders_check_bits)
        return self.poll()

    def _reject(self, voter: int, reason: str) -> list[Outbound]:
        self.rejected_votes[voter] = reason
        self.collector.mark_absent(voter, reason)
        return self.poll()

    @handles("reveal")
    def collect_reveal(self, sender: Identity, body: threshold_sum_pb2.CoinReveal) -> list[Outbound]:
        """Step 2b: a committed party's coin share; one that does not open its commitment aborts the session."""
        if sender.role != "party":
            raise denied(f"{sender} may not send Hamm 'reveal' messages")
        self._require(State.REVEALING, "coin shares")
        entries = {voter: committed[2] for voter, committed in self.committed.items()}
        if not joint_coin.take_reveal(self.session_id, entries, self.revealed, sender.id, bytes(body.share)):
            self.fail(f"party {sender.id}'s coin share does not open its commitment: the session releases nothing")
        return self.poll()

    @handles("flipped")
    def collect_flipped(self, sender: Identity, body: threshold_sum_pb2.FlippedContribution) -> list[Outbound]:
        """Step 2d: a party's signature on its contribution as the joint coin flipped it."""
        if sender.role != "party":
            raise denied(f"{sender} may not send Hamm 'flipped' messages")
        self._require(State.FLIPPING, "flipped contributions")
        if sender.id not in self.flipped:
            raise precondition(f"party {sender.id} was sent no coin")
        self.collector.accept(sender.id, self.flipped[sender.id], body.signature, self.evidence[sender.id])
        return self.poll()

    def _ask_reveals(self) -> list[Outbound]:
        if len(self.committed) < self.parameters.min_contributors:
            self.fail(f"insufficient noise: {len(self.committed)} of {len(self.voters)} parties committed, need "
                      f"{self.parameters.min_contributors}")
        self._advance(State.COLLECTING, State.REVEALING, "asking for coin shares")
        self.phase_started = time.monotonic()
        message = joint_coin.entries_to_proto([self.committed[v][2] for v in sorted(self.committed)])
        return [Outbound(party(v), "coin", message) for v in sorted(self.committed)]

    def _flip(self) -> list[Outbound]:
        entries = [self.committed[v][2] for v in sorted(self.committed)]
        coin = joint_coin.coin(self.session_id, entries, self.revealed)
        p = self.parameters
        for voter, (vote_values, bit_values, _) in self.committed.items():
            coins = noise_bits.coin_bits(coin, voter, len(bit_values))
            self.flipped[voter] = noise_bits.fold(self.public_key, p.layout(self.public_key.n), p.aux_points,
                                                  p.vote_width, p.share_range, vote_values, bit_values, coins)
        self._advance(State.REVEALING, State.FLIPPING, "drawing the joint coin")
        self.phase_started = time.monotonic()
        message = joint_coin.shares_to_proto(self.revealed)
        return [Outbound(party(v), "shares", message) for v in sorted(self.committed)]

    @handles("queries")
    def forward_queries(self, sender: Identity, body) -> list[Outbound]:
        """Step 1: Charlie's X_aux to every party."""
        if sender != CURATOR:
            raise denied(f"{sender} may not send X_aux; Charlie does")
        if self._forwarded:
            raise precondition("X_aux was already forwarded (replay)")
        self._forwarded = True
        return [Outbound(party(number), "queries", self.queries) for number in self.voters]

    def poll(self) -> list[Outbound]:
        if self.state is State.COLLECTING and self.parameters.verifiable_noise:
            if len(self.committed) + len(self.collector.absent) >= len(self.voters):
                return self._ask_reveals()
            return []
        if self.state is State.REVEALING and len(self.revealed) == len(self.committed):
            return self._flip()
        if self.state in (State.COLLECTING, State.FLIPPING) and self.collector.all_in:
            return self._close()
        return []

    def on_deadline(self) -> list[Outbound]:
        if self.state is State.COLLECTING:
            return self._ask_reveals() if self.parameters.verifiable_noise else self._close()
        if self.state is State.REVEALING:
            if time.monotonic() - self.phase_started < self.deadline_seconds:
                return []  # a tick queued while the commitments were checked: the reveals get a whole deadline
            missing = sorted(set(self.committed) - set(self.revealed))
            self.fail(f"parties {missing} revealed no coin share by the deadline: the session releases nothing")
        if self.state is State.FLIPPING:
            if time.monotonic() - self.phase_started < self.deadline_seconds:
                return []
            for voter in self.flipped:
                self.collector.mark_absent(voter, "sent no flipped contribution by the deadline")
            return self._close()
        if self.state is State.HANDED_ON:  # every delivery has been tried by now
            self._advance(State.HANDED_ON, State.DONE, "finishing")
            return []
        raise aborted(f"session timed out after {self.deadline_seconds:.0f} s")

    def on_undeliverable(self, to: Identity, kind: str, reason: str) -> list[Outbound]:
        if kind == "coin" and self.state is State.REVEALING:
            self.fail(f"party {to.id} cannot reveal its coin share: the session releases nothing")
        if kind in ("queries", "shares"):
            self.collector.mark_absent(to.id, reason)
            return self.poll()
        if kind == "aggregate":  # Charlie is gone: no one could combine
            self.abort(self.unreachable_reason(to))
        if kind == "decryption_request" and self.state is State.HANDED_ON:
            # Charlie would otherwise wait for this holder until its deadline.
            notice = hamm_pb2.HolderUnreachable(holder=to.id, reason=reason[:200])
            return [Outbound(CURATOR, "holder_unreachable", notice)]
        return []

    def _close(self) -> list[Outbound]:
        """Step 3: the signed votes of S to every key holder and to Charlie; each computes C = Π_{i∈S} Enc_i."""
        try:
            request: threshold_sum_pb2.DecryptionRequest = self.collector.close()
        except ProtocolError as error:
            if error.kind is Kind.ABORTED:
                self.abort(str(error))
            raise
        if self.parameters.verifiable_noise:  # the holders recompute the coin and every flip
            request.coin_entries.CopyFrom(joint_coin.entries_to_proto([self.committed[v][2] for v in sorted(self.committed)]))
            request.coin_shares.CopyFrom(joint_coin.shares_to_proto(self.revealed))
        self._advance(self.state, State.HANDED_ON, "handing the aggregate on")
        self.collector.forget()
        aggregate = hamm_pb2.HammAggregate(request=request, asked=self.key_holders, rejected_votes=[
            threshold_sum_pb2.RejectedShare(holder=v, reason=r) for v, r in sorted(self.rejected_votes.items())])
        return ([Outbound(party(h), "decryption_request", request) for h in self.key_holders]
                + [Outbound(CURATOR, "aggregate", aggregate)])

    def _forget(self) -> None:
        self.collector.forget()
        self.committed.clear()
        self.revealed.clear()
        self.flipped.clear()
        self.evidence.clear()


def protocol(public_key: ThresholdPublicKey, voters: list[int], key_holders: list[int],
             keys: ContributionKeys | None = None) -> RoleProtocol:
    """The aggregator's registry entry: Charlie's `queries` (step 1) opens a session."""

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body) -> HammAggregatorSide:
        if sender != CURATOR:
            raise denied(f"{sender} may not open a Hamm session at the aggregator; Charlie does")
        parameters = HammParameters.from_proto(body.parameters)
        check_key_id(public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        if parameters.parties != len(voters):
            raise invalid(f"the session declares {parameters.parties} parties; this topology has {len(voters)}")
        features = matrix_from_proto(body.features)
        if features.shape != (parameters.aux_points, parameters.dimension):
            raise invalid(f"X_aux is {features.shape[0]}×{features.shape[1]}; the session declares "
                          f"{parameters.aux_points}×{parameters.dimension}")
        if not 0 < body.deadline_seconds <= MAX_DEADLINE_S:
            raise invalid(f"deadline must be in (0, {MAX_DEADLINE_S}] seconds")
        parameters.calibrate()
        parameters.check_verifiable_size()
        if parameters.proven_votes:  # before any work: the holders' request must fit one message
            well_formed.check_size(public_key, parameters.parties, parameters.aux_points, parameters.vote_width,
                                   parameters.values * parameters.share_range if parameters.verifiable_noise else 0,
                                   parameters.holders_check_bits)
        return HammAggregatorSide(session_id, parameters, body, public_key, voters, key_holders, keys)

    return RoleProtocol("hamm", hamm_pb2.HammMessage, frozenset({"queries"}), open_side, (HammAggregatorSide,),
                        frozenset({"queries", "votes", "reveal", "flipped"}))
