"""The aggregator's side of a DPPP round (dppp.md steps 1–6), free of gRPC.

COLLECTING --all votes in, or the deadline--> DECRYPTING (verifiable noise: COLLECTING --all commitments in, or
the deadline--> REVEALING --every committed teacher's coin share in--> FLIPPING --every teacher's signed flipped
contribution in, or the deadline--> DECRYPTING) --t verified shares, or the deadline--> DONE; any --abort-->
ABORTED, and a committed teacher that reveals no share, or one that does not open its commitment, aborts the
round (vote_proofs/joint_coin.py says why); those collecting phases are aggregator/ballots.py's, shared with Hamm.
Exactly t key holders are asked first (contributors first: they are alive); one that
fails or cannot be reached is replaced, everyone left is asked when the deadline passes once, and those
never asked are told to stand down. Steps 2–5 are a threshold sum whose combined result stays with the aggregator,
which releases the noisy histograms to the client. The aggregator only ever holds ciphertexts, proven
partial decryptions and the final noisy histograms.
"""

from __future__ import annotations

import enum
import time
from typing import Callable

from aggregator.ballots import BallotCollectorSide
from aggregator.dppp_pool import DpppPoolAggregatorSide
from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.proto.v1 import common_pb2, dppp_pb2, threshold_sum_pb2
from mpdp.protocols.dppp import release
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.protocols.dppp.reference import labels as argmax_labels
from mpdp.sessions.errors import Kind, ProtocolError, denied, invalid
from mpdp.sessions.identity import CLIENT, Identity, party
from mpdp.sessions.matrices import matrix_from_proto
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import handles
from mpdp.sessions.stages import StageTimer
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot
from mpdp.threshold_sum.collector import SumCollector
from mpdp.threshold_sum.combiner import SumCombiner
from mpdp.threshold_sum.context import proof_context
from mpdp.threshold_sum.release_check import evidence_of
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


class DpppAggregatorSide(BallotCollectorSide):
    """The shared ballot and verifiable-noise phases (aggregator/ballots.py) with DPPP's own: the client's opening,
    the decryption by t key holders and the release of the histograms."""

    State = State
    protocol = "dppp"
    title = "DPPP"
    session_noun = "round"
    voter_noun = "teachers"

    def __init__(self, session_id: str, parameters: DpppParameters, features: common_pb2.Matrix, deadline_s: float,
                 public_key: ThresholdPublicKey, teachers: list[int], key_holders: list[int], calibration_s: float = 0.0,
                 keys: ContributionKeys | None = None, pools: Pools | None = None,
                 client_signature: threshold_sum_pb2.ContributionSignature | None = None):
        collector = SumCollector(public_key, teachers, parameters.layout(public_key.n).plaintexts_needed(parameters.values),
                                 parameters.calibration.min_contributors, SumSlot.of("dppp", session_id, parameters), keys)
        super().__init__(session_id, State.OPEN, parameters, public_key, teachers, collector, deadline_s,
                         pools if pools is not None else Pools())
        self.features = features
        # the client's signature on the opening, forwarded unchanged: no teacher answers without it (sessions.opening)
        self.client_signature = client_signature or threshold_sum_pb2.ContributionSignature()
        self.key_holders = list(key_holders)
        self.combiner: SumCombiner | None = None
        self.request: threshold_sum_pb2.DecryptionRequest | None = None
        self.widened = False  # the decryption deadline passed once and every holder left was asked
        self.released: dppp_pb2.DpppRoundResult | None = None
        self.timer = StageTimer(calibration=calibration_s)

    @property
    def teachers(self) -> list[int]:
        return self.voters

    @property
    def ballot_shape(self) -> tuple[int, int]:
        return self.parameters.queries, self.parameters.classes

    @property
    def ballot_copies(self) -> int:
        return self.parameters.ensemble

    @property
    def min_contributors(self) -> int:
        return self.parameters.calibration.min_contributors

    def _lap(self, stage: str) -> None:
        self.timer.lap(stage)

    @property
    def participants(self) -> list[Identity]:
        return [party(number) for number in sorted(set(self.teachers) | set(self.key_holders))]

    def may_abort(self, sender: Identity) -> bool:
        return sender == CLIENT  # a teacher that leaves is a dropout, not the end of the round

    # ------------------------------------------------------------------ messages
    @handles("partial_decryptions")
    def combine_partials(self, sender: Identity, body: threshold_sum_pb2.PartialDecryptions) -> list[Outbound]:
        """Step 5: a key holder's partial decryptions, checked and kept until t of them combine."""
        self._from_party(sender, "partial_decryptions")
        self._require(State.DECRYPTING, "partial decryptions")
        assert self.combiner is not None
        self.combiner.accept(sender.id, body)
        return self.poll()

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
        if self.state is State.DECRYPTING and self.combiner is not None:
            replacements = self._ask(self.combiner.holders_to_ask(self.collector.contributors))
            if self.combiner.settled:
                return self._finish()
            return replacements
        return super().poll()

    # ------------------------------------------------------------------ events
    def on_deadline(self) -> list[Outbound]:
        """The decryption waits one deadline, then asks every holder left once, then combines what came."""
        if self.state is State.DECRYPTING:
            assert self.combiner is not None
            if not self.widened and self.combiner.unasked:
                self.widened = True
                return self._ask(self.combiner.ask_everyone_left())
            return self._finish()
        return super().on_deadline()

    def on_undeliverable(self, to: Identity, kind: str, reason: str) -> list[Outbound]:
        if kind == "decryption_request" and self.combiner is not None:
            self.combiner.mark_absent(to.id, reason)
        return super().on_undeliverable(to, kind, reason)

    # ------------------------------------------------------------------ steps 3 and 6
    def _close_collection(self) -> list[Outbound]:
        """Step 3–4: C = Π_{i∈S} Enc_i; every holder asked gets the same signed votes and computes C itself."""
        self.request = self._with_coin(self._or_abort(self.collector.close))
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
        super()._forget()
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
