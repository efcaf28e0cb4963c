"""Role identities ("party/3", "aggregator/0") and who sent an RPC.

With TLS the sender is the identity its client certificate names; without TLS
it is the identity the client declares in metadata. Either way, a message
that names its sender must match.
"""

from __future__ import annotations

from dataclasses import dataclass

from sessions.errors import denied

SENDER_METADATA_KEY = "x-mpdp-sender"
ROLES = ("party", "aggregator", "curator", "client")


@dataclass(frozen=True, order=True)
class Identity:
    role: str
    id: int = 0

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"unknown role {self.role!r}")
        if self.id < 0:
            raise ValueError("role ids are non-negative")

    def __str__(self) -> str:
        return f"{self.role}/{self.id}"

    @classmethod
    def parse(cls, text: str) -> "Identity":
        role, _, number = text.partition("/")
        if not number.isdigit():
            raise ValueError(f"identity {text!r} is not role/id")
        return cls(role, int(number))


CLIENT = Identity("client", 0)
AGGREGATOR = Identity("aggregator", 0)
CURATOR = Identity("curator", 0)


def party(number: int) -> Identity:
    return Identity("party", number)


def sender_of(context) -> Identity | None:
    """The caller's identity: its certificate's CN under TLS (metadata is then ignored),
    the identity it declares in metadata on a plaintext channel; None if neither names a role."""
    auth = context.auth_context() or {}
    if auth.get("transport_security_type") == [b"ssl"]:
        names = auth.get("x509_common_name") or []
        try:
            return Identity.parse(names[0].decode()) if names else None
        except ValueError:
            return None
    for key, value in context.invocation_metadata() or ():
        if key == SENDER_METADATA_KEY:
            try:
                return Identity.parse(value)
            except ValueError:
                return None
    return None


def require_sender(context, *allowed: Identity) -> Identity:
    """The caller, if it is one of the roles this step names; PERMISSION_DENIED otherwise."""
    sender = sender_of(context)
    if sender not in allowed:
        expected = ", ".join(map(str, allowed))
        raise denied(f"{sender or 'an unidentified caller'} may not call this; expected {expected}")
    return sender
