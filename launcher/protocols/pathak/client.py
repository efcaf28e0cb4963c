"""The client ("Dave") for Pathak: opens the session at every participant,
starts it, collects the K+1 published shares, reconstructs ŵˢ and evaluates it."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time

import grpc
import numpy as np

from launcher.common.client import ABORT_TIMEOUT_S, abort_everywhere, collect_traffic, lost, role_stub, to_role
from launcher.common.progress import progress
from launcher.protocols.pathak.transcript import transcript
from mpdp.deployments.topology import Topology
from mpdp.learning import evaluation, threshold
from mpdp.learning.pathak_local import signed_labels
from mpdp.proto.v1 import common_pb2, pathak_pb2
from mpdp.protocols.pathak import ring
from mpdp.protocols.pathak.parameters import PathakParameters
from mpdp.sessions.identity import CLIENT, CURATOR
from mpdp.wire.channels import PeerChannels
from mpdp.wire.traffic import TrafficLog

EVALUATOR_VIEW = "evaluator_view"


async def _to_all(peers: PeerChannels, participants, session_id: str, message, timeout: float) -> None:
    """One message to every participant; every call completes before the first failure is raised."""
    outcomes = await asyncio.gather(*(role_stub(peers, p).Step(to_role(session_id, p, pathak=message), timeout=timeout)
                                      for p in participants), return_exceptions=True)
    failure = next((o for o in outcomes if isinstance(o, BaseException)), None)
    if failure is not None:
        raise failure


async def _abort_everywhere(peers: PeerChannels, participants, session_id: str) -> None:
    await asyncio.gather(*(role_stub(peers, p).AbortSession(common_pb2.AbortRequest(
        session_id=session_id, reason="the client gave up on the session", sender=str(CLIENT), receiver=str(p)),
        timeout=5) for p in participants), return_exceptions=True)


def _what_is_hidden(parameters: PathakParameters) -> dict:
    if parameters.distributed:
        return {"hides": "from Charlie and the other parties: every ŵ_j and every party's noise share; no one knows η",
                "does_not_hide": ["Stage 1 is skipped: with every party adding a share, no minimum is needed",
                                  "the noise is calibrated to the public n_min, so it says nothing about n_(1)"]}
    not_hidden = ["the selected party drew η itself and may recognise its selection"]
    if parameters.calibrate_to == "n_1":
        not_hidden.append("ŵˢ reveals n_(1) approximately through the noise's magnitude")
    return {"hides": "from Charlie and the other parties: every n_j, which party is smallest, every ŵ_j and η",
            "does_not_hide": not_hidden}


class SessionFailed(RuntimeError):
    """A session whose outcome honest parties cannot have produced: nothing of it is published."""


def check_honest_range(parameters: PathakParameters, total: list[int], session_id: str) -> None:
    """Stage 3's sum against what honest parties can produce (`honest_sum_bound`): a Stage 3 share off by
    anything larger moves ŵˢ, so the session fails before anything is divided, evaluated or reported."""
    bound = parameters.honest_sum_bound
    outside = [i for i, value in enumerate(total) if abs(value) > bound]
    if outside:
        raise SessionFailed(f"Pathak session {session_id} failed: the reconstructed sum leaves the honest range "
                            f"|T| ≤ {bound} in {len(outside)} of {len(total)} coordinates (a party's Stage 3 share "
                            "is malformed); nothing is published")


async def run_pathak_session(topology: Topology, client_data: dict, parameters: PathakParameters,
                             session_id: str | None = None) -> dict:
    session_id = session_id or secrets.token_hex(8)
    participants = [entry.identity for entry in topology.parties] + [CURATOR]
    own_log = TrafficLog()
    peers = PeerChannels(CLIENT, topology.addresses, own_log, topology.tls_for(CLIENT), hosts=topology.principals)
    started = time.perf_counter()
    try:
        progress(f"Pathak (session id {session_id}): K = {parameters.parties}, ε = {parameters.epsilon}, "
                  f"λ = {parameters.regularization}, {parameters.mechanism}/{parameters.calibration}")
        try:
            await _to_all(peers, participants, session_id, pathak_pb2.PathakMessage(open=parameters.to_proto()), 120)
            opened = time.perf_counter()
            await _to_all(peers, participants, session_id, pathak_pb2.PathakMessage(start=common_pb2.Empty()), 30)
        except BaseException:  # e.g. a party refuses (n_j < n_min): nobody keeps the session until its deadline
            await _abort_everywhere(peers, participants, session_id)
            raise
        waits = [asyncio.ensure_future(role_stub(peers, p).AwaitResult(
            to_role(session_id, p), timeout=parameters.deadline_seconds + 10)) for p in participants]
        await asyncio.wait(waits, return_when=asyncio.FIRST_EXCEPTION)
        if any(w.done() and not w.cancelled() and w.exception() is not None for w in waits):
            # One participant failed (died: UNAVAILABLE): the others are stopped now, not at their deadline.
            first = next(p for p, w in zip(participants, waits) if w.done() and w.exception() is not None)
            await abort_everywhere(peers, topology, session_id,
                                   lost(first, next(w.exception() for w in waits if w.done() and w.exception())))
            await asyncio.wait(waits, timeout=ABORT_TIMEOUT_S + 5)
            for w in waits:
                w.cancel()
            failures = [w.exception() for w in waits if w.done() and not w.cancelled() and w.exception() is not None]
            # The survivors' ABORTED status names the cause; a dead peer only says UNAVAILABLE.
            raise next((f for f in failures if getattr(f, "code", lambda: None)() == grpc.StatusCode.ABORTED),
                       failures[0])
        replies = [w.result() for w in waits]
        shares = [r.pathak.published for r in replies]
        finished = time.perf_counter()
        traffic = await collect_traffic(peers, topology, session_id, own_log)
    finally:
        await peers.close()

    total = ring.decode_signed(ring.add([ring.from_bytes(s.share.values, parameters.dimension) for s in shares]))
    check_honest_range(parameters, total, session_id)
    w = np.array(total, dtype=float) / 2**parameters.fractional_bits / parameters.parties
    test_x, test_y = client_data["test_features"], signed_labels(client_data["test_labels"])
    cut = threshold.on_public_rows(evaluation.public_rows(client_data) @ w)  # public rows only: post-processing
    predictions = np.where(threshold.predict(test_x @ w, cut) == 1, 1.0, -1.0)
    accuracy = float(np.mean(predictions == test_y))
    test_metrics = {**evaluation.metrics(test_y, predictions, test_x @ w, spread=True), "threshold": cut}
    stage_timing = {str(p): {t.stage: t.seconds for t in s.timing} for p, s in zip(participants, shares)}
    return {
        "protocol": "pathak",
        "session_id": session_id,
        "parameters": {**dataclasses.asdict(parameters),
                       "dataset": str(client_data["dataset"]), "dataset_source": str(client_data["source"]),
                       "comparison_bits": parameters.comparison_bits, "noise_value_bits": parameters.noise.noise_value_bits},
        "result": {
            "w": w.tolist(),
            "norm": float(np.linalg.norm(w)),
            "test_accuracy": accuracy,
            "test_metrics": test_metrics,
        },
        "privacy": parameters.privacy_report(),
        **_what_is_hidden(parameters),
        # What `mpdp verify` re-checks (launcher/protocols/pathak/transcript.py): the published shares alone.
        "transcript": transcript(parameters, session_id, [str(p) for p in participants], shares),
        "timing": {"open": opened - started, "protocol": finished - opened, "total": finished - started},
        # What only the operator can assemble (every role's logs, the launcher's split): it names π1 and the
        # party sizes, so it is kept apart from what the protocol publishes and from what any role learns.
        EVALUATOR_VIEW: {
            "note": "operator/evaluator only: collected from every role's logs with the client identity; it "
                    "spells out π1 (per-party routing, self-deliveries) and no protocol role sees it",
            "self_deliveries": {str(p): {c.kind: c.count for c in s.self_deliveries} for p, s in zip(participants, shares)},
            "stages_by_participant": stage_timing,
            "traffic": traffic["summary"],
            "traffic_detail": traffic["detail"],
            "traffic_client_observed": traffic["client_observed"],
        },
    }
