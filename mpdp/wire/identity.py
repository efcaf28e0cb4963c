"""Who a transport peer is, and which logical identities it may speak for.

A peer's principal is the name its client certificate carries (under TLS; metadata is then
ignored) or the name it declares in metadata (on a plaintext channel). One process may host
many logical parties: its principal "party/1-250" covers party/1 … party/250, and it may send
messages as any of them, but as no one else.
"""

from __future__ import annotations

from dataclasses import dataclass

from mpdp.sessions.errors import denied
from mpdp.sessions.identity import ROLES, Identity

SENDER_METADATA_KEY = "x-mpdp-sender"


@dataclass(frozen=True, order=True)
class Principal:
    role: str
    first: int = 0
    last: int = 0

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"unknown role {self.role!r}")
        if not 0 <= self.first <= self.last:
            raise ValueError(f"bad id range {self.first}-{self.last}")
        if self.role != "party" and self.first != self.last:
            raise ValueError("only parties are hosted several to a process")

    @classmethod
    def of(cls, identity: Identity) -> "Principal":
        return cls(identity.role, identity.id, identity.id)

    @classmethod
    def parse(cls, text: str) -> "Principal":
        role, _, numbers = text.partition("/")
        first, _, last = numbers.partition("-")
        if not first.isdigit() or not (last or first).isdigit() or len(first) > 9 or len(last) > 9:
            raise ValueError(f"principal {text!r} is not role/id or role/first-last")
        return cls(role, int(first), int(last or first))

    def __str__(self) -> str:
        return f"{self.role}/{self.first}" if self.first == self.last else f"{self.role}/{self.first}-{self.last}"

    @property
    def dns_name(self) -> str:
        suffix = str(self.first) if self.first == self.last else f"{self.first}-{self.last}"
        return f"{self.role}-{suffix}.mpdp"

    @property
    def identities(self) -> list[Identity]:
        return [Identity(self.role, number) for number in range(self.first, self.last + 1)]

    @property
    def single(self) -> Identity | None:
        return Identity(self.role, self.first) if self.first == self.last else None

    def covers(self, identity: Identity | None) -> bool:
        return identity is not None and identity.role == self.role and self.first <= identity.id <= self.last


def principal_of(context) -> Principal | None:
    """The caller's principal, or None if neither its certificate nor its metadata names one."""
    auth = context.auth_context() or {}
    if auth.get("transport_security_type") == [b"ssl"]:
        names = auth.get("x509_common_name") or []
        text = names[0].decode() if names else None
    else:
        text = next((value for key, value in context.invocation_metadata() or () if key == SENDER_METADATA_KEY), None)
    if text is None:
        return None
    try:
        return Principal.parse(text)
    except ValueError:
        return None


def sender_of(context) -> Identity | None:
    """The caller's identity when its principal is a single one (the client, Charlie, one party)."""
    principal = principal_of(context)
    return principal.single if principal is not None else None


def require_sender(context, *allowed: Identity) -> Identity:
    """The caller, if it is one of the roles this step names; PERMISSION_DENIED otherwise."""
    sender = sender_of(context)
    if sender not in allowed:
        expected = ", ".join(map(str, allowed))
        raise denied(f"{sender or 'an unidentified caller'} may not call this; expected {expected}")
    return sender  # type: ignore[return-value]


def require_speaks_for(context, logical: Identity) -> None:
    """The caller's principal covers `logical`; PERMISSION_DENIED otherwise."""
    principal = principal_of(context)
    if principal is None or not principal.covers(logical):
        raise denied(f"{principal or 'an unidentified caller'} may not speak for {logical}")
