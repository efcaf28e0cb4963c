"""The server's side of a Du run (du.md "Rounds"; the aggregator role), free of gRPC.

ROUND(k) --all uploads in, or the round deadline--> [DECRYPTING(k) --t holders, or the deadline-->]
ROUND(k+1) … --converged or the round limit--> FINISHING --the final model delivered (or given up on) to
every party--> DONE; any --abort--> ABORTED. The result is published once the final messages are out, so a
run's report counts every message. The server sends θ_k to the
parties still in the run, averages their uploads by n_i (in the clear, or as one threshold sum whose
decrypted total is all it learns), and drops a party that misses a round from the later ones.
"""

from __future__ import annotations

import enum
import time

import numpy as np

from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.cryptocore.proofs.membership_proof import MembershipProofInvalid
from mpdp.cryptocore.proofs.product_proof import ProductProofInvalid
from mpdp.proto.v1 import common_pb2, du_pb2, threshold_sum_pb2
from mpdp.protocols.du import encoding, proven_upload, release, server
from mpdp.protocols.du.parameters import MAX_RECORDS, DuParameters
from mpdp.sessions.errors import Kind, ProtocolError, denied, invalid, precondition
from mpdp.sessions.identity import CLIENT, Identity, party
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import RoleSide, handles
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot
from mpdp.threshold_sum.collector import SumCollector, absent_reasons
from mpdp.threshold_sum.combiner import SumCombiner
from mpdp.threshold_sum.context import proof_context
from mpdp.threshold_sum.release_check import evidence_of

MAX_ROUND_DEADLINE_S = 3600.0


class State(enum.Enum):
    ROUND = "collecting uploads"
    DECRYPTING = "decrypting the round's sum"
    FINISHING = "sending the final model"
    DONE = "done"
    ABORTED = "aborted"


class DuServerSide(RoleSide):
    State = State

    def __init__(self, session_id: str, parameters: DuParameters, round_deadline_s: float, noise_seed: int,
                 public_key: ThresholdPublicKey, parties: list[int], key_holders: list[int],
                 keys: ContributionKeys | None = None,
                 client_signature: threshold_sum_pb2.ContributionSignature | None = None):
        super().__init__(session_id, State.ROUND)
        self.identity = Identity("aggregator", 0)
        # the client's signature on the opening, sent with round 0's model: no party starts without it
        self.client_signature = client_signature or threshold_sum_pb2.ContributionSignature()
        self.parameters = parameters
        self.round_deadline_s = round_deadline_s
        self.deadline_seconds = round_deadline_s  # checked against the current round's start
        self.noise_seed = noise_seed
        self.public_key = public_key
        self.active = list(parties)
        self.key_holders = list(key_holders)
        self.keys = keys
        self.dropped: list[int] = []
        self.round = 0
        self.theta = np.zeros(parameters.weights)
        self.round_models: list[np.ndarray] = []  # θ_1, θ_2, …: the release is their mean (server.released)
        self.uploads: dict[int, tuple[int, np.ndarray]] = {}
        self.absent: dict[int, str] = {}  # this round's missing parties → why (a refusal's words, a deadline)
        self.collector: SumCollector | None = None
        self.combiner: SumCombiner | None = None
        self.rejected: dict[int, str] = {}
        self.rejected_uploads: dict[int, str] = {}  # parties whose range proofs failed: excluded by name
        self.history: list[du_pb2.DuRound] = []
        self.request: threshold_sum_pb2.DecryptionRequest | None = None  # the current round's, once closed
        self.evidence: list[du_pb2.DuRoundEvidence] = []  # secure aggregation: each round's, for the client
        self.stopped = ""
        self.released: du_pb2.DuResult | None = None
        self.finals_pending: set[int] = set()
        self._round_started = time.monotonic()
        self._started = time.perf_counter()
        self._opened = False

    @property
    def participants(self) -> list[Identity]:
        return [party(number) for number in sorted(set(self.active) | set(self.key_holders))]

    def may_abort(self, sender: Identity) -> bool:
        return sender == CLIENT  # a party that leaves is dropped, not the end of the run

    @handles("open")
    def open_run(self, sender: Identity, body) -> list[Outbound]:
        """The client opens the run: round 0's model to every party."""
        if sender != CLIENT:
            raise denied(f"{sender} may not open a Du run")
        if self._opened:
            raise precondition("the run is already open (replay)")
        self._opened = True
        return self._start_round()

    @handles("upload")
    def collect_upload(self, sender: Identity, body: du_pb2.DuUpload) -> list[Outbound]:
        """A party's local update of the round, to the weighted average."""
        self._from_party(sender, "upload")
        self._require(State.ROUND, "an upload")
        self._accept(sender.id, body)
        return self.poll()

    @handles("partial_decryptions")
    def combine_partials(self, sender: Identity, body: du_pb2.DuPartialDecryptions) -> list[Outbound]:
        """Secure aggregation: a key holder's partial decryptions of the round's weighted sum."""
        self._from_party(sender, "partial_decryptions")
        self._require(State.DECRYPTING, "partial decryptions")
        if body.round != self.round:
            raise precondition(f"partial decryptions for round {body.round}; round {self.round} is decrypting")
        assert self.combiner is not None
        self.combiner.accept(sender.id, body.partials)
        return self.poll()

    @staticmethod
    def _from_party(sender: Identity, kind: str) -> None:
        if sender.role != "party":
            raise denied(f"{sender} may not send Du '{kind}' messages to the server")

    def _accept(self, number: int, body: du_pb2.DuUpload) -> None:
        """Cheap checks first: the round, the sender, sizes and ranges; then (secure) the ciphertexts."""
        p = self.parameters
        if body.round != self.round:
            raise precondition(f"an upload for round {body.round}; round {self.round} is open")
        if number not in self.active:
            raise precondition(f"party {number} is not in this round (dropped or unknown)")
        if number in self.rejected_uploads:
            raise precondition(f"party {number} was excluded: {self.rejected_uploads[number]}")
        if number in self.uploads or number in self.absent:
            raise precondition(f"party {number} already uploaded in round {self.round} (replay)")
        if p.secure_aggregation:
            if body.theta or body.records:
                raise invalid("under secure aggregation an upload carries ciphertexts only")
            assert self.collector is not None
            if not body.HasField("proof"):
                raise invalid("under secure aggregation an upload carries its range proof")
            self.collector.check(number, body.encrypted, body.signature)  # the signature before the proof
            try:
                proven_upload.check(self.public_key, p, body.encrypted, body.proof,
                                    proven_upload.context(self.session_id, number, self.round))
            except (MembershipProofInvalid, ProductProofInvalid) as error:
                self.rejected_uploads[number] = f"range proof failed in round {self.round}: {error}"
                self._give_up(number, self.rejected_uploads[number])
                return
            self.collector.accept(number, body.encrypted, body.signature)
            self.uploads[number] = (0, np.empty(0))
            return
        theta = np.array(body.theta, dtype=float)
        if theta.shape != (p.weights,) or not np.all(np.isfinite(theta)) or np.max(np.abs(theta)) > p.bound:
            raise invalid(f"θ_ik must be {p.weights} finite values in [−B, B]")
        if not 1 <= body.records <= min(MAX_RECORDS, p.records_cap):
            raise invalid(f"n_i must be in [1, {p.records_cap}] (the run's public cap)")
        self.uploads[number] = (int(body.records), theta)

    def _start_round(self) -> list[Outbound]:
        p = self.parameters
        self.uploads, self.absent = {}, {}
        self._round_started = time.monotonic()
        if p.secure_aggregation:
            count = encoding.layout(p, self.public_key.n).plaintexts_needed(encoding.values(p))
            self.collector = SumCollector(self.public_key, self.active, count, p.min_contributors,
                                          SumSlot.of("du", self.session_id, p, self.round), self.keys)
        model = du_pb2.DuModel(parameters=p.to_proto(), round=self.round, theta=self.theta.tolist(),
                               round_deadline_seconds=self.round_deadline_s, noise_seed=self.noise_seed)
        if self.round == 0:
            model.client_signature.CopyFrom(self.client_signature)
        return [Outbound(party(number), "model", model) for number in self.active]

    def poll(self) -> list[Outbound]:
        if self.state is State.ROUND and len(self.uploads) + len(self.absent) >= len(self.active):
            return self._close_round()
        if self.state is State.DECRYPTING and self.combiner is not None and self.combiner.settled:
            return self._finish_decryption()
        return []

    def on_deadline(self) -> list[Outbound]:
        if time.monotonic() - self._round_started < self.round_deadline_s:
            return []
        if self.state is State.ROUND:
            for number in self.active:
                if number not in self.uploads:
                    self._give_up(number, "no upload before the round deadline")
            return self.poll()
        if self.state is State.DECRYPTING:
            return self._finish_decryption()  # with the holders that answered, if t did
        if self.state is State.FINISHING:  # the last messages are tried for a round deadline at most
            self.finals_pending.clear()
            self._check_finished()
        return []

    def on_undeliverable(self, to: Identity, kind: str, reason: str) -> list[Outbound]:
        if kind == "model" and self.state is State.FINISHING:
            self.finals_pending.discard(to.id)
            self._check_finished()
            return []
        if kind == "model" and self.state is State.ROUND and to.id in self.active:
            self._give_up(to.id, reason)
            return self.poll()
        if kind == "decryption_request" and self.combiner is not None:
            self.combiner.mark_absent(to.id, reason)
            return self.poll()
        return []

    def _give_up(self, number: int, reason: str) -> None:
        if number in self.uploads:
            return
        self.absent[number] = reason
        if self.collector is not None:
            self.collector.mark_absent(number, reason)

    def _close_round(self) -> list[Outbound]:
        p = self.parameters
        contributors = sorted(n for n in self.uploads)
        self.dropped += sorted(self.absent)
        self.active = contributors
        if len(contributors) < p.min_contributors:
            # the client's one line names the cause (a refusal by the parties' privacy policy, say), not a count only
            why = self.collector.absent_reasons() if self.collector is not None else absent_reasons(self.absent)
            self.fail(f"round {self.round}: {len(contributors)} uploads, {p.min_contributors} needed{why}")
        if not p.secure_aggregation:
            return self._advance_round(server.weighted_average(self.uploads))
        assert self.collector is not None
        try:
            request = self.collector.close()
        except ProtocolError as error:
            self.fail(str(error))
        aggregate = self.collector.aggregate
        self.request = request  # for the round's evidence (docs/client-checks.md)
        self.collector.forget()
        self._advance(State.ROUND, State.DECRYPTING, "decrypting the round's sum")
        self._round_started = time.monotonic()  # the holders get a whole deadline: checking the proofs took the round's
        self.combiner = SumCombiner(self.public_key, self.key_holders, aggregate,
                                    proof_context("du", self.session_id, self.round))
        message = du_pb2.DuDecryptionRequest(round=self.round, request=request)
        return [Outbound(party(h), "decryption_request", message) for h in self.key_holders]

    def _finish_decryption(self) -> list[Outbound]:
        assert self.combiner is not None
        p = self.parameters
        try:
            plaintexts, _ = self.combiner.combine()
            average = release.average_of(p, self.public_key, plaintexts, len(self.active), self.round)
        except ProtocolError as error:
            if error.kind is Kind.ABORTED:
                self.fail(str(error))
            raise
        assert self.request is not None
        self.evidence.append(du_pb2.DuRoundEvidence(round=self.round,
                                                    evidence=evidence_of(self.request, self.combiner.answers)))
        self.request = None
        self.rejected.update(self.combiner.rejected)
        self.combiner.forget()
        self.combiner = None
        self._advance(State.DECRYPTING, State.ROUND, "the next round")
        return self._advance_round(average)

    def _advance_round(self, average: np.ndarray) -> list[Outbound]:
        p = self.parameters
        step = float(np.linalg.norm(average - self.theta))
        self.history.append(du_pb2.DuRound(round=self.round, participants=self.active, step_norm=step,
                                           seconds=time.monotonic() - self._round_started))
        previous, self.theta = self.theta, average
        self.round_models.append(average)
        self.round += 1
        if server.converged(previous, average, p.tolerance):
            self.stopped = f"converged after {self.round} rounds"
        elif self.round >= p.rounds:
            self.stopped = f"round limit {p.rounds}"
        else:
            return self._start_round()
        return self._release()

    def _release(self) -> list[Outbound]:
        released_theta = server.released(self.parameters, self.round_models)
        self.released = du_pb2.DuResult(
            theta=released_theta.tolist(), rounds=self.round, stopped=self.stopped, history=self.history,
            dropped=self.dropped,
            timing=[common_pb2.StageTiming(stage="rounds", seconds=time.perf_counter() - self._started)],
            rejected=[threshold_sum_pb2.RejectedShare(holder=h, reason=r) for h, r in sorted(self.rejected.items())],
            rejected_uploads=[threshold_sum_pb2.RejectedShare(holder=h, reason=r)
                              for h, r in sorted(self.rejected_uploads.items())],
            evidence=self.evidence)
        self._advance(State.ROUND, State.FINISHING, "sending the final model")
        self._round_started = time.monotonic()
        final = du_pb2.DuModel(parameters=self.parameters.to_proto(), round=self.round, theta=released_theta.tolist(),
                               final=True)
        self.finals_pending = set(self.active)
        self._check_finished()
        return [Outbound(party(number), "model", final) for number in self.active]

    def on_delivered(self, to: Identity, kind: str) -> list[Outbound]:
        if kind == "model" and self.state is State.FINISHING:
            self.finals_pending.discard(to.id)
            self._check_finished()
        return []

    def _check_finished(self) -> None:
        if self.state is State.FINISHING and not self.finals_pending:
            self._advance(State.FINISHING, State.DONE, "releasing the model")

    def result(self) -> tuple[str, object] | None:
        return ("result", self.released) if self.released is not None and self.state is State.DONE else None

    def _forget(self) -> None:
        self.evidence.clear()
        self.request = None
        if self.collector is not None:
            self.collector.forget()
        if self.combiner is not None:
            self.combiner.forget()
        self.uploads.clear()


def protocol(public_key: ThresholdPublicKey, parties: list[int], key_holders: list[int],
             keys: ContributionKeys | None = None) -> RoleProtocol:
    """The server's registry entry: the client's `open` starts a run."""

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body) -> DuServerSide:
        if sender != CLIENT:
            raise denied(f"{sender} may not open a Du run; the client does")
        parameters = DuParameters.from_proto(body.parameters)
        check_key_id(public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        if parameters.parties != len(parties):
            raise invalid(f"the run declares {parameters.parties} parties; this topology has {len(parties)}")
        if not 0 < body.round_deadline_seconds <= MAX_ROUND_DEADLINE_S:
            raise invalid(f"the round deadline must be in (0, {MAX_ROUND_DEADLINE_S}] seconds")
        if parameters.secure_aggregation:
            encoding.layout(parameters, public_key.n)
        return DuServerSide(session_id, parameters, body.round_deadline_seconds, body.noise_seed, public_key,
                          parties, key_holders, keys, client_signature=body.client_signature)

    return RoleProtocol("du", du_pb2.DuMessage, frozenset({"open"}), open_side, (DuServerSide,),
                        frozenset({"open", "upload", "partial_decryptions"}))
