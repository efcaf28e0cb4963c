"""A protocol as one role runs it: the entry a role's registry holds for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Collection

from sessions.identity import Identity
from sessions.side import RoleSide

# (session_id, me, sender, opening kind, opening body) → this role's side; cheap checks first, it may be slow.
OpenSide = Callable[[str, Identity, Identity, str, object], RoleSide]
# The identities a role host serves → nothing; work its sessions will need, started in the background.
StartHost = Callable[[Collection[Identity]], None]


def _nothing_to_prepare(hosted: Collection[Identity]) -> None:
    return None


@dataclass(frozen=True)
class RoleProtocol:
    name: str  # the Envelope's field for it; a protocol without one travels in `extension`
    message_type: Any  # the protocol's generated message class: a `body` oneof of its message kinds
    opening_kinds: frozenset[str]  # the kinds that open a session at this role
    open: OpenSide
    start_host: StartHost = _nothing_to_prepare  # called once as a role process starts serving


def start_hosts(protocols: dict[str, RoleProtocol], hosted: Collection[Identity]) -> None:
    """A role process's start-up: each protocol prepares what its first session would otherwise wait for."""
    for protocol in protocols.values():
        protocol.start_host(hosted)


def registry(*protocols: RoleProtocol) -> dict[str, RoleProtocol]:
    names = [p.name for p in protocols]
    if len(set(names)) != len(names):
        raise ValueError(f"a protocol is registered twice: {names}")
    return {p.name: p for p in protocols}
