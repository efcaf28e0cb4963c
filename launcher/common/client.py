"""What every protocol's client ("Dave") shares: envelopes to a role, the client's
data file, and every role's traffic records of a session."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import numpy as np

from mpdp.deployments.topology import Topology
from mpdp.proto.v1 import common_pb2, role_pb2, role_pb2_grpc, threshold_sum_pb2
from mpdp.sessions.identity import CLIENT, Identity
from mpdp.wire.channels import PeerChannels
from mpdp.wire.traffic import TrafficLog, merge_views, summarise, traffic_reply


def role_stub(peers: PeerChannels, identity: Identity) -> role_pb2_grpc.RoleStub:
    return role_pb2_grpc.RoleStub(peers.channel(identity))


def to_role(session_id: str, receiver: Identity, sender: Identity = CLIENT, **body) -> role_pb2.Envelope:
    """An envelope to `receiver` (from the client unless `sender` says otherwise); `body` is at most one
    protocol's message (`dppp=…`)."""
    return role_pb2.Envelope(session_id=session_id, sender=str(sender), receiver=str(receiver), **body)


ABORT_TIMEOUT_S = 5.0


async def abort_everywhere(peers: PeerChannels, topology: Topology, session_id: str, reason: str) -> None:
    """The client's abort of a session at every role process (each aborts every logical role of it that knows the
    session): when the role it awaited dies, the others stop at once instead of waiting out their deadline.
    Best effort: a process that does not know the session, or is gone, has nothing to stop."""
    await asyncio.gather(*(role_stub(peers, entry.identity).AbortSession(common_pb2.AbortRequest(
        session_id=session_id, reason=reason, sender=str(CLIENT)), timeout=ABORT_TIMEOUT_S)
        for entry in topology.host_entries), return_exceptions=True)


def lost(receiver: Identity, error: BaseException) -> str:
    """Why the client gives up on a session whose result it awaited from `receiver`."""
    if isinstance(error, grpc.aio.AioRpcError):
        if error.code() == grpc.StatusCode.UNAVAILABLE:
            return f"the client lost {receiver}: it could not be reached"
        return f"the client lost {receiver}: {error.code().name}"
    return "the client gave up on the session"


def load_client_data(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}



def _row(record) -> dict:
    return {"from": f"{record.from_role}/{record.from_id}", "to": f"{record.to_role}/{record.to_id}",
            "from_role": record.from_role, "to_role": record.to_role, "rpc": record.rpc,
            "request_bytes": record.request_bytes, "response_bytes": record.response_bytes, "status": record.status,
            "call_id": record.call_id, "observed_by": record.observed_by, "started_ns": record.started_ns,
            "finished_ns": record.finished_ns}


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


def opening_signature(topology: Topology, protocol: str, session_id: str, parameters,
                      public_inputs: bytes = b"") -> threshold_sum_pb2.ContributionSignature:
    """The client's signature on a session's opening (mpdp.sessions.opening), with its own TLS key, over the
    parameters as every party will decode them; empty in a plaintext deployment."""
    from mpdp.cryptocore.keys.contribution_signature import ContributionSigner
    from mpdp.sessions import opening

    tls = topology.tls_for(CLIENT)
    signer = None if tls is None else ContributionSigner.from_files(tls.key, tls.certificate)
    decoded = type(parameters).from_proto(parameters.to_proto())
    return opening.sign(signer, protocol, session_id, decoded, public_inputs)


async def await_result(topology: Topology, session_id: str, receiver: Identity, timeout: float,
                       **body) -> tuple[role_pb2.Envelope, dict, float]:
    """Open a session at `receiver` with `body` (one protocol field of the envelope) and wait for its
    result; then collect every role's traffic. (reply, traffic, seconds until the reply)."""
    import time

    from launcher.common.progress import progress

    own_log = TrafficLog()
    peers = PeerChannels(CLIENT, topology.addresses, own_log, topology.tls_for(CLIENT), hosts=topology.principals)
    started = time.perf_counter()
    try:
        try:
            reply = await role_stub(peers, receiver).AwaitResult(to_role(session_id, receiver, **body),
                                                                 timeout=timeout)
        except BaseException as error:  # the releasing role died or refused: nobody else waits for it
            if not (isinstance(error, grpc.aio.AioRpcError) and error.code() == grpc.StatusCode.ABORTED):
                await asyncio.shield(abort_everywhere(peers, topology, session_id, lost(receiver, error)))
            raise
        round_trip = time.perf_counter() - started
        progress("session complete; collecting traffic from every role")
        traffic = await collect_traffic(peers, topology, session_id, own_log)
    finally:
        await peers.close()
    return reply, traffic, round_trip
