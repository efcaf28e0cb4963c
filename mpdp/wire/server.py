"""Start a role's asyncio gRPC server behind its connection gate: health service, traffic accounting,
message-size limits, a handshake timeout, graceful shutdown on SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import logging
import signal

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from mpdp.wire.admission import AdmissionInterceptor
from mpdp.wire.channels import DEFAULT_MAX_MESSAGE_BYTES, MAX_CONCURRENT_RPCS, channel_options
from mpdp.wire.gate import ConnectionGate
from mpdp.wire.identity import Principal
from mpdp.wire.tls import TlsFiles
from mpdp.wire.traffic import ServerTrafficInterceptor, TrafficLog

log = logging.getLogger(__name__)
SHUTDOWN_GRACE_S = 5.0
# A connection that has not finished its TLS handshake by then is closed (gRPC's own default is 120 s).
HANDSHAKE_TIMEOUT_MS = 10_000


async def serve(
    me: Principal,
    address: str,
    add_servicer,
    service_name: str,
    traffic: TrafficLog,
    tls: TlsFiles | None,
    on_stop=None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    extra_interceptors: tuple = (),
) -> None:
    """Serve until SIGTERM or SIGINT, then stop gracefully. `tls` None means plaintext (explicitly insecure)."""
    server = grpc.aio.server(
        # Admission first: a request is refused by its caller and size before anything parses it.
        interceptors=[AdmissionInterceptor(), ServerTrafficInterceptor(traffic, me), *extra_interceptors],
        # No port sharing: a second server for the same role and address must fail, not split the connections.
        options=channel_options(max_message_bytes) + [("grpc.so_reuseport", 0),
                                                       ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_MS)],
        maximum_concurrent_rpcs=MAX_CONCURRENT_RPCS,  # beyond it callers get RESOURCE_EXHAUSTED (retried)
    )
    add_servicer(server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    gate = ConnectionGate(address)
    try:
        gate.start()
    except OSError as error:
        raise OSError(f"{me} cannot listen on {address}: the address is in use (is this role already running?) "
                      f"or not local ({error.strerror or error})") from None
    try:
        try:
            if tls is None:
                log.warning("%s serves PLAINTEXT on %s (--insecure): no channel authentication", me, address)
                bound = server.add_insecure_port(gate.inner_address)
            else:
                bound = server.add_secure_port(gate.inner_address, tls.server_credentials())
        except RuntimeError:  # gRPC's "Failed to bind"
            bound = 0
        if bound == 0:
            raise OSError(f"{me} cannot listen on its private socket {gate.inner_path}")
        await server.start()
        for name in ("", service_name):
            await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("%s serving on %s", me, address)

        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
        log.info("%s shutting down", me)
        await health_servicer.enter_graceful_shutdown()
        if on_stop is not None:
            await on_stop()
        await server.stop(SHUTDOWN_GRACE_S)
    finally:
        gate.stop()
