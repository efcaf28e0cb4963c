"""Client channels to peers, with message-size limits and traffic recording."""

from __future__ import annotations

import grpc

from mpdp.sessions.identity import Identity
from mpdp.wire import links
from mpdp.wire.identity import Principal
from mpdp.wire.tls import TlsFiles, target_options
from mpdp.wire.traffic import ClientTrafficInterceptor, TrafficLog

# The largest honest message at 2048 bits is about 55 MB (a key holder's proven partial decryptions of
# Q·C = 50 000 unpacked values); larger keys or unpacked layouts need --max-message-bytes.
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# Memory held by requests in flight is bounded by this times the message limit.
MAX_CONCURRENT_RPCS = 128
# Interceptors every channel this process opens adds after its own: the observe extra's client spans in a
# launcher process that asked for them (mpdp/observe/role.py); empty otherwise.
PROCESS_INTERCEPTORS: list = []


def channel_options(max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> list[tuple[str, int]]:
    return [
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.max_receive_message_length", max_message_bytes),
        # A restarted peer is reachable again within a fraction of a second. The minimum backoff is left at
        # gRPC's default: it is also the connection-attempt timeout, and 200 ms made TLS handshakes fail under load.
        ("grpc.initial_reconnect_backoff_ms", 200),
        ("grpc.max_reconnect_backoff_ms", 2000),
    ]


class PeerChannels:
    """One lazily opened channel per peer host (a host may serve many logical parties)."""

    def __init__(self, me: Identity | Principal, addresses: dict[Identity, str], log: TrafficLog, tls: TlsFiles | None,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, extra_interceptors: tuple = (),
                 hosts: dict[Identity, Principal] | None = None):
        self._me = me if isinstance(me, Principal) else Principal.of(me)
        self._hosts = dict(hosts or {})
        self._extra_interceptors = list(extra_interceptors)  # test-mode fault injection only
        self._credentials = tls.channel_credentials() if tls is not None else None
        self._addresses = dict(addresses)
        self._log = log
        self._options = channel_options(max_message_bytes)
        self._channels: dict[Principal, grpc.aio.Channel] = {}

    def host_of(self, peer: Identity) -> Principal:
        return self._hosts.get(peer) or Principal.of(peer)

    def channel(self, peer: Identity) -> grpc.aio.Channel:
        host = self.host_of(peer)
        if host not in self._channels:
            interceptors = [ClientTrafficInterceptor(self._log, self._me, host), *self._extra_interceptors,
                            *PROCESS_INTERCEPTORS]
            address = links.route(self._me, host, self._addresses[peer])  # an emulated link's relay, if any
            if self._credentials is None:
                channel = grpc.aio.insecure_channel(address, options=self._options, interceptors=interceptors)
            else:
                channel = grpc.aio.secure_channel(address, self._credentials, options=self._options + target_options(host),
                                                  interceptors=interceptors)
            self._channels[host] = channel
        return self._channels[host]

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()
