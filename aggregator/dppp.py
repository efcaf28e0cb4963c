"""The aggregator's side of a DPPP round (dppp.md steps 1–6), free of gRPC.

COLLECTING --all votes in, or the deadline--> DECRYPTING (verifiable noise: COLLECTING --all commitments in, or
the deadline--> REVEALING --every committed teacher's coin share in--> FLIPPING --every teacher's signed flipped
contribution in, or the deadline--> DECRYPTING) --t verified shares, or the deadline--> DONE; any --abort-->
ABORTED, and a committed teacher that reveals no share, or one that does not open its commitment, aborts the
round (vote_proofs/joint_coin.py says why). Exactly t key holders are asked first (contributors first: they are alive); one that
fails or cannot be reached is replaced, everyone left is asked when the deadline passes once, and those
never asked are told to stand down. Steps 2–5 are a threshold sum whose combined result stays with the aggregator,
which releases the noisy histograms to the client. The aggregator only ever holds ciphertexts, proven
partial decryptions and the final noisy histograms.
"""

from __future__ import annotations

import enum
import time
from typing import Callable

from aggregator.dppp_pool import DpppPoolAggregatorSide
from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.cryptocore.proofs.membership_proof import MembershipProofInvalid
from mpdp.proto.v1 import common_pb2, dppp_pb2, threshold_sum_pb2
from mpdp.protocols.dppp import release
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.protocols.dppp.reference import labels as argmax_labels
from mpdp.sessions.errors import Kind, ProtocolError, aborted, denied, invalid, precondition
from mpdp.sessions.identity import CLIENT, Identity, party
from mpdp.sessions.matrices import matrix_from_proto
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import RoleSide, handles
from mpdp.sessions.stages import StageTimer
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot
from mpdp.threshold_sum.codec import ciphertexts_from_proto
from mpdp.threshold_sum.collector import SumCollector
from mpdp.threshold_sum.combiner import SumCombiner
from mpdp.threshold_sum.context import proof_context
from mpdp.threshold_sum.release_check import evidence_of
from mpdp.vote_proofs import joint_coin, noise_bits, well_formed
from mpdp.vote_proofs import votes as vote_proofs
from mpdp.vote_proofs.noise_pool import Pools

DEFAULT_DEADLINE_S = 60.0
MAX_DEADLINE_S = 3600.0


class State(enum.Enum):
    OPEN = "open"
    COLLECTING = "collecting votes"
    REVEALING = "collecting coin shares"
    FLIPPING = "flipping noise bits"
    DECRYPTING = "decrypting"
    DONE = "done"
    ABORTED = "aborted"


class DpppAggregatorSide(RoleSide):
    State = State

    def __init__(self, session_id: str, parameters: DpppParameters, features: common_pb2.Matrix, deadline_s: float,
                 public_key: ThresholdPublicKey, teachers: list[int], key_holders: list[int], calibration_s: float = 0.0,
                 keys: ContributionKeys | None = None, pools: Pools | None = None,
                 client_signature: threshold_sum_pb2.ContributionSignature | None = None):
        super().__init__(session_id, State.OPEN)
        self.identity = Identity("aggregator", 0)
        self.parameters = parameters
        self.features = features
        # the client's signature on the opening, forwarded unchanged: no teacher answers without it (sessions.opening)
        self.client_signature = client_signature or threshold_sum_pb2.ContributionSignature()
        self.deadline_seconds = deadline_s
        self.public_key = public_key
        self.teachers = list(teachers)
        self.key_holders = list(key_holders)
        self.layout = parameters.layout(public_key.n)
        self.collector = SumCollector(public_key, teachers, self.layout.plaintexts_needed(parameters.values),
                                      parameters.calibration.min_contributors, SumSlot.of("dppp", session_id, parameters), keys)
        self.combiner: SumCombiner | None = None
        self.request: threshold_sum_pb2.DecryptionRequest | None = None
        self.rejected_votes: dict[int, str] = {}  # teachers whose vote (or noise bit) proofs failed
        self.blamed_votes: dict[int, dppp_pb2.DpppVotes] = {}  # the failing votes as they came, for the client
        self.pools = pools if pools is not None else Pools()  # verifiable noise: each teacher's offline bits
        self.committed: dict[int, tuple[list[int], list[int], joint_coin.Entry]] = {}  # verifiable noise
        self.revealed: dict[int, bytes] = {}  # verifiable noise: coin shares, each opening its commitment
        self.reveal_started = 0.0
        self.flipped: dict[int, common_pb2.Ciphertexts] = {}  # verifiable noise: each teacher's folded contribution
        self.evidence: dict[int, threshold_sum_pb2.WellFormed] = {}  # verifiable noise: what the holders check
        self.flip_started = 0.0
        self.widened = False  # the decryption deadline passed once and every holder left was asked
        self.released: dppp_pb2.DpppRoundResult | None = None
        self.timer = StageTimer(calibration=calibration_s)

    @property
    def participants(self) -> list[Identity]:
        return [party(number) for number in sorted(set(self.teachers) | set(self.key_holders))]

    def may_abort(self, sender: Identity) -> bool:
        return sender == CLIENT  # a teacher that leaves is a dropout, not the end of the round

    # ------------------------------------------------------------------ messages
    @handles("votes")
    def collect_votes(self, sender: Identity, body: dppp_pb2.DpppVotes) -> list[Outbound]:
        """Step 2: a teacher's encrypted noisy votes, to the sum."""
        self._from_party(sender, "votes")
        self._require(State.COLLECTING, "votes")
        expected = self.parameters.share_range
        if body.tosses != expected:
            raise invalid(f"teacher {sender.id} used a share range of {body.tosses}, the session requires {expected}")
        if self.parameters.verifiable_noise:
            return self._accept_commitments(sender.id, body)
        if self.parameters.proven_votes:
            return self._accept_proven(sender.id, body)
        self.collector.accept(sender.id, body.votes, body.signature)
        return self.poll()

    @handles("flipped")
    def collect_flipped(self, sender: Identity, body: threshold_sum_pb2.FlippedContribution) -> list[Outbound]:
        """Step 2d: a teacher's signature on its contribution as the joint coin flipped it."""
        self._from_party(sender, "flipped")
        self._require(State.FLIPPING, "flipped contributions")
        if sender.id not in self.flipped:
            raise precondition(f"party {sender.id} was sent no coin")
        self.collector.accept(sender.id, self.flipped[sender.id], body.signature, self.evidence[sender.id])
        return self.poll()

    @handles("partial_decryptions")
    def combine_partials(self, sender: Identity, body: threshold_sum_pb2.PartialDecryptions) -> list[Outbound]:
        """Step 5: a key holder's partial decryptions, checked and kept until t of them combine."""
        self._from_party(sender, "partial_decryptions")
        self._require(State.DECRYPTING, "partial decryptions")
        assert self.combiner is not None
        self.combiner.accept(sender.id, body)
        return self.poll()

    @staticmethod
    def _from_party(sender: Identity, kind: str) -> None:
        if sender.role != "party":
            raise denied(f"{sender} may not send DPPP '{kind}' messages")

    def _accept_proven(self, teacher: int, body: dppp_pb2.DpppVotes) -> list[Outbound]:
        """Step 2 with proven votes: shapes, the signature on the folded vector, then every one-hot proof (T per
        query: one per model of the teacher's ensemble), then the folded vector to the sum. A teacher whose proofs fail is excluded by name; the round goes on if
        enough others contribute."""
        if teacher not in self.teachers:
            raise denied(f"party {teacher} does not contribute to this sum")
        if teacher in self.rejected_votes:
            raise precondition(f"party {teacher} was excluded: {self.rejected_votes[teacher]}")
        if teacher in self.collector.contributions:
            raise precondition(f"party {teacher} already contributed (replay)")
        p = self.parameters
        shape = (self.public_key, self.layout, p.queries, p.classes, p.share_range, body.votes, body.proven)
        # the signature on the folded vector (products: cheap) before the proofs
        self.collector.check(teacher, vote_proofs.folded(*shape, p.ensemble), body.signature)
        try:
            folded = vote_proofs.check_and_fold(*shape, vote_proofs.context("dppp", self.session_id, teacher),
                                                p.ensemble)
        except MembershipProofInvalid as error:
            self.rejected_votes[teacher] = f"vote proof failed: {error}"
            self.blamed_votes[teacher] = body  # the client repeats the check (docs/client-checks.md)
            self.collector.mark_absent(teacher, self.rejected_votes[teacher])
            return self.poll()
        self.collector.accept(teacher, folded, body.signature, well_formed.of_proven(body.votes, body.proven))
        return self.poll()

    def _accept_commitments(self, teacher: int, body: dppp_pb2.DpppVotes) -> list[Outbound]:
        """Step 2 with verifiable noise: the guards, the one-hot proofs, the bits (the pool's next positions,
        verified when uploaded, or bits made in the round), the teacher's signature on its commitments, then the
        round's bit proofs. A teacher whose signature or proofs fail, or that names pool positions not in the pool,
        is excluded by name; the round goes on if enough others contribute. What the key holders check again
        (vote_proofs/well_formed.py) is kept for the decryption request."""
        joint_coin.admit_commitment(teacher, self.teachers, self.rejected_votes, self.committed,
                                    len(body.votes.values), bytes(body.coin_commitment))
        if body.pooled == bool(body.noise_bits.proofs):
            raise invalid("verifiable noise takes either pooled bits or bits made in the round, one of the two")
        p = self.parameters
        count = p.values * p.share_range
        try:
            vote_values = vote_proofs.checked(self.public_key, self.layout, p.queries, p.classes, body.proven,
                                              vote_proofs.context("dppp", self.session_id, teacher), p.ensemble)
        except MembershipProofInvalid as error:
            return self._reject(teacher, f"vote proof failed: {error}", body)
        if body.pooled:
            try:
                spent = self.pools.of(teacher).take(body.pool_first, count)
            except ProtocolError as error:
                return self._reject(teacher, f"noise pool: {error}", body)
            bit_values = spent.values
            evidence = well_formed.of_pooled(self.public_key, body.proven, spent, body.signature,
                                             p.holders_check_bits)
        else:
            bit_values = ciphertexts_from_proto(self.public_key, body.noise_bits.ciphertexts, count)
            evidence = well_formed.of_commitments(body.proven, body.noise_bits, body.signature,
                                                 p.holders_check_bits)
        digest = noise_bits.commitment_digest(self.public_key, vote_values, bit_values)
        try:
            self.collector.authenticate_commitment(teacher, digest, body.signature)
        except ProtocolError as error:
            return self._reject(teacher, f"commitments not signed: {error}", body)
        if not body.pooled:
            try:
                noise_bits.check(self.public_key, count, body.noise_bits,
                                 noise_bits.context("dppp", self.session_id, teacher))
            except MembershipProofInvalid as error:
                return self._reject(teacher, f"noise bit proof failed: {error}", body)
        self.committed[teacher] = (vote_values, bit_values, joint_coin.Entry(teacher, digest, bytes(body.coin_commitment)))
        self.evidence[teacher] = evidence
        return self.poll()

    @handles("reveal")
    def collect_reveal(self, sender: Identity, body: threshold_sum_pb2.CoinReveal) -> list[Outbound]:
        """Step 2b: a committed teacher's coin share. One that does not open its commitment aborts the round: it
        would otherwise choose the coin after seeing others' shares."""
        self._from_party(sender, "reveal")
        self._require(State.REVEALING, "coin shares")
        entries = {teacher: committed[2] for teacher, committed in self.committed.items()}
        if not joint_coin.take_reveal(self.session_id, entries, self.revealed, sender.id, bytes(body.share)):
            self.fail(f"party {sender.id}'s coin share does not open its commitment: the round releases nothing")
        return self.poll()

    def _reject(self, teacher: int, reason: str, body: dppp_pb2.DpppVotes) -> list[Outbound]:
        self.rejected_votes[teacher] = reason
        self.blamed_votes[teacher] = body  # the client repeats the check (docs/client-checks.md)
        self.collector.mark_absent(teacher, reason)
        return self.poll()

    def _ask_reveals(self) -> list[Outbound]:
        """Step 2b: every commitment is fixed; each committed teacher gets every entry and then reveals its share."""
        if len(self.committed) < self.parameters.calibration.min_contributors:
            self.fail(f"insufficient noise: {len(self.committed)} of {len(self.teachers)} teachers committed, need "
                      f"{self.parameters.calibration.min_contributors}")
        self._advance(State.COLLECTING, State.REVEALING, "asking for coin shares")
        self.reveal_started = time.monotonic()
        self.timer.lap("collect_votes")
        message = joint_coin.entries_to_proto([self.committed[t][2] for t in sorted(self.committed)])
        return [Outbound(party(t), "coin", message) for t in sorted(self.committed)]

    def _flip(self) -> list[Outbound]:
        """Step 2c: the joint coin over every entry and share; each teacher's bits flipped and folded here, and
        every share to each, which folds, signs and sends back its contribution (step 2d)."""
        entries = [self.committed[t][2] for t in sorted(self.committed)]
        coin = joint_coin.coin(self.session_id, entries, self.revealed)
        p = self.parameters
        for teacher, (vote_values, bit_values, _) in self.committed.items():
            coins = noise_bits.coin_bits(coin, teacher, len(bit_values))
            self.flipped[teacher] = noise_bits.fold(self.public_key, self.layout, p.queries, p.classes, p.share_range,
                                                    vote_values, bit_values, coins, p.ensemble)
        self._advance(State.REVEALING, State.FLIPPING, "drawing the joint coin")
        self.flip_started = time.monotonic()
        self.timer.lap("reveal_coin")
        message = joint_coin.shares_to_proto(self.revealed)
        return [Outbound(party(t), "shares", message) for t in sorted(self.committed)]

    @handles("open")
    def send_queries(self, sender: Identity, body) -> list[Outbound]:
        """Step 1: the public batch to every teacher."""
        if sender != CLIENT:
            raise denied(f"{sender} may not open a DPPP round")
        self._advance(State.OPEN, State.COLLECTING, "opening")
        queries = dppp_pb2.DpppQueries(parameters=self.parameters.to_proto(), features=self.features,
                                       deadline_seconds=self.deadline_seconds, client_signature=self.client_signature)
        return [Outbound(party(t), "queries", queries) for t in self.teachers]

    def poll(self) -> list[Outbound]:
        if self.state is State.COLLECTING and self.parameters.verifiable_noise:
            if len(self.committed) + len(self.collector.absent) >= len(self.teachers):
                return self._ask_reveals()
            return []
        if self.state is State.REVEALING and len(self.revealed) == len(self.committed):
            return self._flip()
        if self.state in (State.COLLECTING, State.FLIPPING) and self.collector.all_in:
            return self._close_collection()
        if self.state is State.DECRYPTING and self.combiner is not None:
            replacements = self._ask(self.combiner.holders_to_ask(self.collector.contributors))
            if self.combiner.settled:
                return self._finish()
            return replacements
        return []

    # ------------------------------------------------------------------ events
    def on_deadline(self) -> list[Outbound]:
        """Each phase waits one deadline; then it goes on with who answered (or aborts)."""
        if self.state is State.COLLECTING:
            return self._ask_reveals() if self.parameters.verifiable_noise else self._close_collection()
        if self.state is State.REVEALING:
            if time.monotonic() - self.reveal_started < self.deadline_seconds:
                return []  # a tick queued while the commitments were checked: the reveals get a whole deadline
            missing = sorted(set(self.committed) - set(self.revealed))
            self.fail(f"parties {missing} revealed no coin share by the deadline: the round releases nothing")
        if self.state is State.FLIPPING:
            if time.monotonic() - self.flip_started < self.deadline_seconds:
                return []  # a tick queued while the commitments were checked: the flips get a whole deadline
            for teacher in self.flipped:
                self.collector.mark_absent(teacher, "sent no flipped contribution by the deadline")
            return self._close_collection()
        if self.state is State.DECRYPTING:
            assert self.combiner is not None
            if not self.widened and self.combiner.unasked:
                self.widened = True
                return self._ask(self.combiner.ask_everyone_left())
            return self._finish()
        raise aborted(f"session timed out after {self.deadline_seconds:.0f} s")

    def on_undeliverable(self, to: Identity, kind: str, reason: str) -> list[Outbound]:
        if kind == "coin" and self.state is State.REVEALING:
            self.fail(f"party {to.id} cannot reveal its coin share: the round releases nothing")
        if kind in ("queries", "shares"):
            self.collector.mark_absent(to.id, reason)
        elif kind == "decryption_request" and self.combiner is not None:
            self.combiner.mark_absent(to.id, reason)
        return self.poll()

    # ------------------------------------------------------------------ steps 3 and 6
    def _close_collection(self) -> list[Outbound]:
        """Step 3–4: C = Π_{i∈S} Enc_i; every holder asked gets the same signed votes and computes C itself."""
        self.request = self._or_abort(self.collector.close)
        if self.parameters.verifiable_noise:  # the holders recompute the coin and every flip
            self.request.coin_entries.CopyFrom(joint_coin.entries_to_proto([self.committed[t][2]
                                                                            for t in sorted(self.committed)]))
            self.request.coin_shares.CopyFrom(joint_coin.shares_to_proto(self.revealed))
        self.combiner = SumCombiner(self.public_key, self.key_holders, self.collector.aggregate,
                                    proof_context("dppp", self.session_id), ask_threshold_first=True)
        if self.state is State.FLIPPING:
            self._advance(State.FLIPPING, State.DECRYPTING, "closing the flipped contributions")
            self.timer.lap("flip_noise")
        else:
            self._advance(State.COLLECTING, State.DECRYPTING, "closing the vote collection")
            self.timer.lap("collect_votes")
        return self._ask(self.combiner.holders_to_ask(self.collector.contributors))

    def _ask(self, holders: list[int]) -> list[Outbound]:
        return [Outbound(party(h), "decryption_request", self.request) for h in holders]

    def _finish(self) -> list[Outbound]:
        """Step 6: combine, unpack, check feasibility, remove the noise mean; holders never asked stand down. The
        result carries what the client checks it with (docs/client-checks.md)."""
        assert self.combiner is not None and self.request is not None
        self.timer.lap("partial_decryptions")
        plaintexts, decryptors = self._or_abort(self.combiner.combine)
        contributors = self.collector.contributors
        histograms = self._or_abort(lambda: release.histograms(self.parameters, self.public_key, plaintexts,
                                                               len(contributors)))
        self.timer.lap("combine")
        self.timer.seconds["total"] = self.timer.elapsed + self.timer.seconds["calibration"]
        self.released = dppp_pb2.DpppRoundResult(
            queries=self.parameters.queries, classes=self.parameters.classes,
            histograms=histograms.ravel().tolist(), labels=argmax_labels(histograms).tolist(),
            contributors=contributors, decryptors=decryptors,
            rejected=[threshold_sum_pb2.RejectedShare(holder=h, reason=r) for h, r in sorted(self.combiner.rejected.items())],
            rejected_votes=[threshold_sum_pb2.RejectedShare(holder=t, reason=r) for t, r in sorted(self.rejected_votes.items())],
            timing=self.timer.to_proto(),
            tosses_per_teacher=self.parameters.share_range if self.parameters.noise == "binomial" else 0,
            total_tosses_required=self.parameters.total_tosses,
            evidence=evidence_of(self.request, self.combiner.answers),
            blamed=[dppp_pb2.DpppBlamed(teacher=t, votes=v) for t, v in sorted(self.blamed_votes.items())],
        )
        self._advance(State.DECRYPTING, State.DONE, "releasing the histograms")
        stand_down = dppp_pb2.DpppStandDown()
        return [Outbound(party(h), "stand_down", stand_down) for h in self.combiner.unasked]

    def _or_abort(self, step: Callable):
        try:
            return step()
        except ProtocolError as error:
            if error.kind is Kind.ABORTED:
                self.fail(str(error))
            raise

    def result(self) -> tuple[str, object] | None:
        return ("result", self.released) if self.released is not None and self.state is State.DONE else None

    def _forget(self) -> None:
        self.collector.forget()
        self.blamed_votes.clear()
        self.committed.clear()
        self.revealed.clear()
        self.flipped.clear()
        self.evidence.clear()
        if self.combiner is not None:
            self.combiner.forget()
        self.released = None


def protocol(public_key: ThresholdPublicKey, teachers: list[int], key_holders: list[int],
             keys: ContributionKeys | None = None) -> RoleProtocol:
    """The aggregator's registry entry: the client's `open` starts a round, its `fill` an offline fill of every
    teacher's noise pool (kept here for the process's life)."""
    pools = Pools()

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body
                  ) -> DpppAggregatorSide | DpppPoolAggregatorSide:
        if sender != CLIENT:
            raise denied(f"{sender} may not open a DPPP round")
        if kind == "fill":
            return DpppPoolAggregatorSide(session_id, body, public_key, teachers, pools)
        parameters = DpppParameters.from_proto(body.parameters)
        check_key_id(public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        if parameters.teachers != len(teachers):
            raise invalid(f"the session declares {parameters.teachers} teachers; this topology has {len(teachers)}")
        features = matrix_from_proto(body.features)
        if features.shape[0] != parameters.queries:
            raise invalid(f"{features.shape[0]} query rows but {parameters.queries} queries declared")
        deadline = body.deadline_seconds or DEFAULT_DEADLINE_S
        if not 0 < deadline <= MAX_DEADLINE_S:
            raise invalid(f"deadline must be in (0, {MAX_DEADLINE_S}] seconds")
        started = time.perf_counter()
        parameters.calibrate()
        parameters.check_holders_request(public_key)  # before any work: the holders' request fits one message
        return DpppAggregatorSide(session_id, parameters, body.features, deadline, public_key, teachers, key_holders,
                                  time.perf_counter() - started, keys, pools, client_signature=body.client_signature)

    return RoleProtocol("dppp", dppp_pb2.DpppMessage, frozenset({"open", "fill"}), open_side,
                        (DpppAggregatorSide, DpppPoolAggregatorSide),
                        frozenset({"open", "votes", "reveal", "flipped", "partial_decryptions", "fill", "pool_bits"}))
