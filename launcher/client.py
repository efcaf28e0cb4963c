"""The client ("Dave"): starts a DPPP session against a running topology,
collects the released labels, trains and evaluates the student, and builds
the report (protocol, parameters, result, privacy, traffic, timing)."""

from __future__ import annotations

import asyncio
import secrets
import time
from pathlib import Path

import grpc
import numpy as np

from cryptocore import keyfiles
from dppp.parameters import DEFAULT_HONEST_FRACTION, DpppParameters
from launcher.progress import progress
from learning import models
from mpdp_proto.v1 import common_pb2, dppp_pb2, role_pb2, role_pb2_grpc
from sessions.identity import AGGREGATOR, CLIENT, Identity
from sessions.matrices import matrix_to_proto
from wire.channels import PeerChannels
from wire.topology import Topology
from wire.traffic import TrafficLog, merge_views, summarise, traffic_reply


def role_stub(peers: PeerChannels, identity: Identity) -> role_pb2_grpc.RoleStub:
    return role_pb2_grpc.RoleStub(peers.channel(identity))


def to_role(session_id: str, receiver: Identity, sender: Identity = CLIENT, **body) -> role_pb2.Envelope:
    """An envelope to `receiver` (from the client unless `sender` says otherwise); `body` is at most one
    protocol's message (`dppp=…`)."""
    return role_pb2.Envelope(session_id=session_id, sender=str(sender), receiver=str(receiver), **body)


def load_client_data(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}



def _row(record) -> dict:
    return {"from": f"{record.from_role}/{record.from_id}", "to": f"{record.to_role}/{record.to_id}",
            "from_role": record.from_role, "to_role": record.to_role, "rpc": record.rpc,
            "request_bytes": record.request_bytes, "response_bytes": record.response_bytes, "status": record.status,
            "call_id": record.call_id, "observed_by": record.observed_by}


async def collect_traffic(peers: PeerChannels, topology: Topology, session_id: str, own_log: TrafficLog) -> dict:
    """Every role's records of the session, each RPC once (server's record, else the caller's).

    The client-observed view (every caller's own records, the client's included)
    is kept beside it as a cross-check.
    """
    replies = await asyncio.gather(*(
        role_stub(peers, identity).GetTraffic(common_pb2.SessionRef(session=session_id), timeout=10)
        for identity in topology.hosts
    ), return_exceptions=True)
    server_side: list[dict] = []
    client_side = [_row(record) for record in traffic_reply(own_log, session_id).records]
    for reply in replies:
        if isinstance(reply, BaseException):
            continue
        for record in reply.records:
            (server_side if record.observed_by == "server" else client_side).append(_row(record))
    merged = merge_views(server_side, client_side)
    # A retried message keeps its call id: the caller's view counts it once too (its last attempt).
    attempts = {row["call_id"] or f"client-{index}": row for index, row in enumerate(client_side)}
    return {"summary": summarise(merged), "detail": merged, "client_observed": summarise(list(attempts.values()))}


async def run_dppp_session(topology: Topology, client_data: dict, epsilon: float, delta: float, queries: int,
                           packed: bool = True, honest_fraction: float = DEFAULT_HONEST_FRACTION,
                           deadline_s: float = 120.0, session_id: str | None = None) -> dict:
    public_key = keyfiles.load_public_key(topology.public_key)
    public_features = client_data["public_features"]
    if not 1 <= queries <= len(public_features):
        raise ValueError(f"--queries must be in [1, {len(public_features)}] for this data set")
    classes = int(client_data["classes"])
    parameters = DpppParameters(epsilon, delta, queries, classes, len(topology.parties), honest_fraction, packed,
                                public_key.key_id)
    session_id = session_id or secrets.token_hex(8)
    own_log = TrafficLog()
    peers = PeerChannels(CLIENT, topology.addresses, own_log, topology.tls_for(CLIENT), hosts=topology.principals)
    started = time.perf_counter()
    try:
        progress(f"DPPP session {session_id}: {queries} queries, {len(topology.parties)} teachers, ε={epsilon}, δ={delta}")
        request = dppp_pb2.DpppRoundRequest(parameters=parameters.to_proto(),
                                            features=matrix_to_proto(public_features[:queries]),
                                            deadline_seconds=deadline_s)
        reply = await role_stub(peers, AGGREGATOR).AwaitResult(
            to_role(session_id, AGGREGATOR, dppp=dppp_pb2.DpppMessage(open=request)), timeout=4 * deadline_s + 60)
        result = reply.dppp.result
        round_s = time.perf_counter() - started
        progress("round complete; collecting traffic from every role")
        traffic = await collect_traffic(peers, topology, session_id, own_log)
    finally:
        await peers.close()

    labels = np.array(result.labels, dtype=int)
    histograms = np.array(result.histograms, dtype=np.int64).reshape(result.queries, result.classes)
    student = models.train(models.DEFAULT_STUDENT_MODEL, public_features[:queries], labels)
    true_labels = client_data["public_labels"][:queries]
    timing = {t.stage: t.seconds for t in result.timing}
    timing["client_round_trip"] = round_s
    return {
        "protocol": "dppp",
        "session_id": session_id,
        "parameters": {
            "dataset": str(client_data["dataset"]), "dataset_source": str(client_data["source"]),
            "teachers": len(topology.parties), "key_holders": public_key.holders, "threshold": public_key.threshold,
            "key_bits": public_key.n.bit_length(), "queries": queries, "classes": classes,
            "epsilon": epsilon, "delta": delta, "honest_fraction": honest_fraction, "packed": packed,
            "deadline_s": deadline_s,
        },
        "result": {
            "labels": labels.tolist(),
            "histograms": histograms.tolist(),
            "label_agreement_with_truth": float(np.mean(labels == true_labels)),
            "student_model": models.DEFAULT_STUDENT_MODEL,
            "student_test_accuracy": models.accuracy(student, client_data["test_features"], client_data["test_labels"]),
            "contributors": list(result.contributors),
            "decryptors": list(result.decryptors),
            "rejected_shares": {str(r.holder): r.reason for r in result.rejected},
        },
        "privacy": parameters.calibration.report(len(result.contributors)),
        "traffic": traffic["summary"],
        "traffic_detail": traffic["detail"],
        "traffic_client_observed": traffic["client_observed"],
        "timing": timing,
    }


async def test_records(topology: Topology, session_id: str) -> dict[int, dppp_pb2.DpppTestRecord]:
    """Test mode only: what each teacher drew."""
    peers = PeerChannels(CLIENT, topology.addresses, TrafficLog(), topology.tls_for(CLIENT), hosts=topology.principals)
    try:
        records = {}
        for entry in topology.parties:
            try:
                reply = await role_stub(peers, entry.identity).GetTestRecord(to_role(session_id, entry.identity),
                                                                            timeout=10)
            except grpc.aio.AioRpcError:
                continue
            records[entry.identity.id] = reply.dppp.test_record
        return records
    finally:
        await peers.close()
