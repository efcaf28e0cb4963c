"""One health check of one role (what `mpdp health` and the compose health check run): grpc and the
topology only, so a check costs a fraction of a CPU-second on a busy machine."""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from mpdp.deployments.topology import Topology
from mpdp.sessions.identity import CLIENT, Identity
from mpdp.wire.tls import target_options


def is_serving(topology: Topology, identity: Identity, timeout: float = 2.0) -> bool:
    """One health check over the deployment's channel security: mTLS as the client, or, from a role's own
    bundle (a compose health check, which holds no client certificate), as that role."""
    entry = topology.entry(identity)
    tls = topology.tls_for(CLIENT if topology.holds_credentials(CLIENT) else entry.principal)
    channel = (grpc.insecure_channel(entry.address) if tls is None else
               grpc.secure_channel(entry.address, tls.channel_credentials(), options=target_options(entry.principal)))
    with channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=timeout)
        except grpc.RpcError:
            return False
    return reply.status == health_pb2.HealthCheckResponse.SERVING
