"""The listening socket in front of a role's gRPC server: connections per peer address are capped.

gRPC accepts every TCP connection and has no per-peer limit, so one address could hold enough idle
connections (never starting TLS) to exhaust a role's file descriptors. The gate accepts on the role's
address, refuses a connection beyond MAX_CONNECTIONS_PER_PEER from one address (or MAX_CONNECTIONS in
all) by closing it at once, and relays the others byte for byte to the gRPC server, which listens on a
Unix socket in a private directory. TLS still ends in gRPC; the gate sees only ciphertext, and gRPC's
handshake timeout still closes a connection that never completes its handshake.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import socket
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

log = logging.getLogger(__name__)

# Honest roles open one channel per peer host, and the client one per session it runs at a time: every
# role of a loopback deployment shares one address, so the cap leaves room for a busy client.
MAX_CONNECTIONS_PER_PEER = 64
MAX_CONNECTIONS = 1024  # below the usual descriptor limit: each relayed connection holds three
CHUNK_BYTES = 256 * 1024
REFUSAL_LOG_INTERVAL_S = 10.0


def split_address(address: str) -> tuple[str, int]:
    """"host:port" or "[v6]:port" as (host, port)."""
    host, separator, port = address.rpartition(":")
    if not separator or not port.isdigit():
        raise OSError(f"{address!r} is not host:port")
    return host.strip("[]") or "0.0.0.0", int(port)


class ConnectionGate:
    """Runs in its own thread and event loop, so a busy role loop never stalls the relaying."""

    def __init__(self, address: str, per_peer: int = MAX_CONNECTIONS_PER_PEER, total: int = MAX_CONNECTIONS):
        self._host, self._port = split_address(address)
        self._per_peer = per_peer
        self._total = total
        self._directory = Path(tempfile.mkdtemp(prefix="mpdp-gate-"))  # 0700: only this user reaches the socket
        self.inner_path = self._directory / "grpc.sock"
        self._open: Counter[str] = Counter()
        self._refused: Counter[str] = Counter()
        self._last_refusal_log = 0.0
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.AbstractServer | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="connection-gate", daemon=True)

    @property
    def inner_address(self) -> str:
        return f"unix:{self.inner_path}"

    def start(self) -> None:
        """Listen on the role's address; OSError if it cannot (in use, not local)."""
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._listen(), self._loop)
        try:
            future.result()
        except BaseException:
            self.stop()
            raise

    async def _listen(self) -> None:
        # No port sharing: a second server for the same role and address must fail, not split the connections.
        self._server = await asyncio.start_server(self._relay, self._host, self._port, reuse_port=False,
                                                  limit=CHUNK_BYTES, backlog=512)

    def open_connections(self) -> dict[str, int]:
        return dict(self._open)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = _peer_address(writer)
        if self._open[peer] >= self._per_peer or sum(self._open.values()) >= self._total:
            writer.transport.abort()
            self._note_refusal(peer)
            return
        self._open[peer] += 1
        inner_writer = None
        try:
            inner_reader, inner_writer = await asyncio.open_unix_connection(str(self.inner_path), limit=CHUNK_BYTES)
            pipes = [asyncio.ensure_future(_pipe(reader, inner_writer)), asyncio.ensure_future(_pipe(inner_reader, writer))]
            # Either side closing ends the connection (HTTP/2 does not half-close).
            _, pending = await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        except OSError as error:
            log.warning("relaying a connection from %s failed: %s", peer, error)
        finally:
            self._open[peer] -= 1
            if self._open[peer] <= 0:
                del self._open[peer]
            for side in (writer, inner_writer):
                if side is not None:
                    side.transport.abort()

    def _note_refusal(self, peer: str) -> None:
        self._refused[peer] += 1
        now = time.monotonic()
        if now - self._last_refusal_log >= REFUSAL_LOG_INTERVAL_S:  # a flood must not flood the log too
            self._last_refusal_log = now
            log.warning("refused connections beyond the cap (%d per address, %d in all): %s", self._per_peer,
                        self._total, ", ".join(f"{address} {count}" for address, count in self._refused.most_common(5)))
            self._refused.clear()

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()

        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(close(), self._loop).result(timeout=5)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
        shutil.rmtree(self._directory, ignore_errors=True)


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    while chunk := await source.read(CHUNK_BYTES):
        sink.write(chunk)
        await sink.drain()


def _peer_address(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    if isinstance(peer, tuple) and peer:
        return str(peer[0])
    sock = writer.get_extra_info("socket")
    return str(sock.family if isinstance(sock, socket.socket) else "unknown")
