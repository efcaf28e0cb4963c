"""A user-space link emulator: one TCP relay on loopback per directed link between two role hosts.

The design of toxiproxy: the dialling role connects to its link's relay instead of its peer; the relay
connects on to the peer and copies bytes both ways, holding each chunk back as the link's profile says —
the one-way latency, the time to transmit it at the link's bandwidth (each direction its own queue, so a
long message delays those behind it), and, for a lost TCP segment, one retransmission timeout (TCP never
drops bytes on the application: loss is delay, and everything behind the lost segment waits with it).
Chunks leave in the order they came, so the byte stream is exactly the one sent: mutual TLS runs end to end
through it (the relay never sees a key, and the caller still checks the peer's certificate name, which
`grpc.ssl_target_name_override` sets independently of the address dialled). Needs no privilege; for
kernels with `sch_netem` a `tc netem` setup would be the alternative (launcher.deployment.network).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mpdp.wire.profiles import SEGMENT_BYTES, NetworkProfile

CHUNK_BYTES = 64 * 1024
CONNECT_TIMEOUT_S = 10.0


class Direction:
    """One direction of one link: a FIFO whose chunks are released at their arrival time + transmission +
    latency (+ an RTO when a segment of the chunk is lost), never before the chunk ahead of them."""

    def __init__(self, profile: NetworkProfile, seed: bytes):
        self.profile = profile  # replaced by `Relays.reshape`: open connections take the new one at once
        self._random = random.Random(int.from_bytes(hashlib.sha256(seed).digest()[:8], "big"))
        self._link_free = 0.0  # when the link finishes transmitting what it holds
        self._last_release = 0.0

    def release_time(self, now: float, size: int) -> float:
        profile = self.profile
        sent = max(now, self._link_free) + profile.transmission_s(size)
        self._link_free = sent
        release = sent + profile.latency_s
        if profile.loss:
            segments = max(1, -(-size // SEGMENT_BYTES))
            if any(self._random.random() < profile.loss for _ in range(segments)):
                release += profile.retransmission_timeout_s
        self._last_release = max(release, self._last_release)
        return self._last_release


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, direction: Direction) -> None:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def deliver() -> None:
        while True:
            release, chunk = await queue.get()
            if not chunk:
                break
            delay = release - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            writer.write(chunk)
            await writer.drain()
        with contextlib.suppress(OSError):
            if writer.can_write_eof():
                writer.write_eof()

    delivering = asyncio.create_task(deliver())
    try:
        while True:
            chunk = await reader.read(CHUNK_BYTES)
            if not chunk:
                break
            queue.put_nowait((direction.release_time(loop.time(), len(chunk)), chunk))
    except OSError:
        pass
    finally:
        queue.put_nowait((0.0, b""))
        with contextlib.suppress(OSError):
            await delivering


@dataclass
class Link:
    """One directed link: `source` dials `target` through `listen` (host, port)."""

    source: str
    target: str
    listen: tuple[str, int]


class Relays:
    """Every link's relay in one event loop. `resolve(target)` is the target host's (host, port), asked at each
    connection (so the relays may start before the roles they lead to)."""

    def __init__(self, profile: NetworkProfile, links: list[Link],
                 resolve: Callable[[str], Awaitable[tuple[str, int]]]):
        self._profile = profile
        self._links = links
        self._resolve = resolve
        self._servers: list[asyncio.base_events.Server] = []
        self._directions: dict[tuple[str, str], Direction] = {}

    def _direction(self, source: str, target: str) -> Direction:
        key = (source, target)
        if key not in self._directions:
            self._directions[key] = Direction(self._profile, f"{source}>{target}".encode())
        return self._directions[key]

    def reshape(self, profile: NetworkProfile) -> None:
        """Put every link, open connections included, under `profile` from now on."""
        self._profile = profile
        for direction in self._directions.values():
            direction.profile = profile

    async def start(self) -> None:
        for link in self._links:
            server = await asyncio.start_server(self._handler(link), *link.listen, reuse_address=True)
            self._servers.append(server)

    def _handler(self, link: Link):
        async def handle(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
            try:
                host, port = await self._resolve(link.target)
                server_reader, server_writer = await asyncio.wait_for(asyncio.open_connection(host, port),
                                                                      CONNECT_TIMEOUT_S)
            except (OSError, asyncio.TimeoutError, KeyError):
                client_writer.close()
                return
            # Requests cross the link source → target, replies target → source: one queue each.
            await asyncio.gather(
                _pump(client_reader, server_writer, self._direction(link.source, link.target)),
                _pump(server_reader, client_writer, self._direction(link.target, link.source)))
            for writer in (client_writer, server_writer):
                writer.close()

        return handle

    async def close(self) -> None:
        for server in self._servers:
            server.close()
            await server.wait_closed()
