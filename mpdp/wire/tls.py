"""Mutual TLS for every channel: credentials from PEM files, identity-named targets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import grpc

from mpdp.sessions.identity import Identity
from mpdp.wire.identity import Principal


def identity_dns_name(identity: Identity | Principal) -> str:
    principal = identity if isinstance(identity, Principal) else Principal.of(identity)
    return principal.dns_name


@dataclass(frozen=True)
class TlsFiles:
    """The CA every role trusts, and one role's own certificate and key."""

    ca: Path
    certificate: Path
    key: Path

    def _read(self) -> tuple[bytes, bytes, bytes]:
        return self.ca.read_bytes(), self.certificate.read_bytes(), self.key.read_bytes()

    def server_credentials(self) -> grpc.ServerCredentials:
        """Clients must present a certificate from our CA (the TLS layer refuses others)."""
        ca, certificate, key = self._read()
        return grpc.ssl_server_credentials([(key, certificate)], root_certificates=ca, require_client_auth=True)

    def channel_credentials(self) -> grpc.ChannelCredentials:
        ca, certificate, key = self._read()
        return grpc.ssl_channel_credentials(root_certificates=ca, private_key=key, certificate_chain=certificate)


def target_options(peer: Identity | Principal) -> list[tuple[str, str]]:
    """Verify that the server's certificate names the role we meant to reach."""
    return [("grpc.ssl_target_name_override", identity_dns_name(peer))]
