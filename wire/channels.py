"""Client channels to peers, with message-size limits and traffic recording."""

from __future__ import annotations

import grpc

from wire.identity import Identity
from wire.traffic import ClientTrafficInterceptor, TrafficLog

DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024


def channel_options(max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> list[tuple[str, int]]:
    return [
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.max_receive_message_length", max_message_bytes),
        # A restarted peer is reachable again within a fraction of a second.
        ("grpc.initial_reconnect_backoff_ms", 200),
        ("grpc.min_reconnect_backoff_ms", 200),
        ("grpc.max_reconnect_backoff_ms", 2000),
    ]


class PeerChannels:
    """One lazily opened channel per peer identity."""

    def __init__(self, me: Identity, addresses: dict[Identity, str], log: TrafficLog,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES):
        self._me = me
        self._addresses = dict(addresses)
        self._log = log
        self._options = channel_options(max_message_bytes)
        self._channels: dict[Identity, grpc.aio.Channel] = {}

    def channel(self, peer: Identity) -> grpc.aio.Channel:
        if peer not in self._channels:
            interceptor = ClientTrafficInterceptor(self._log, self._me, peer)
            self._channels[peer] = grpc.aio.insecure_channel(
                self._addresses[peer], options=self._options, interceptors=[interceptor]
            )
        return self._channels[peer]

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()
