"""A protocol as one role runs it: the entry a role's registry holds for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Collection

from mpdp.sessions.identity import Identity
from mpdp.sessions.side import RoleSide

# (session_id, me, sender, opening kind, opening body) → this role's side; cheap checks first, it may be slow.
OpenSide = Callable[[str, Identity, Identity, str, object], RoleSide]
# The identities a role host serves → nothing; work its sessions will need, started in the background.
StartHost = Callable[[Collection[Identity]], None]


def _nothing_to_prepare(hosted: Collection[Identity]) -> None:
    return None


@dataclass(frozen=True)
class RoleProtocol:
    """Checked when it is made, that is when a role's registry is built at start-up: every kind this role takes
    is one of the proto's, and the sides take exactly those kinds, each one by a handler."""

    name: str  # the Envelope's field for it; a protocol without one travels in `extension`
    message_type: Any  # the protocol's generated message class: a `body` oneof of its message kinds
    opening_kinds: frozenset[str]  # the kinds that open a session at this role
    open: OpenSide
    sides: tuple[type[RoleSide], ...]  # the classes `open` makes (one per role the protocol gives this process)
    takes: frozenset[str]  # every kind the protocol sends to this role (the opening ones included)
    start_host: StartHost = _nothing_to_prepare  # called once as a role process starts serving

    def __post_init__(self) -> None:
        declared = set(message_kinds(self.message_type))
        where = f"{self.name} at this role"
        if not self.sides:
            raise ValueError(f"{where}: no side")
        if unknown := sorted(self.takes - declared):
            raise ValueError(f"{where} takes {unknown}, which {self.message_type.__name__} does not have")
        if not self.opening_kinds <= self.takes:
            raise ValueError(f"{where}: the opening kinds {sorted(self.opening_kinds - self.takes)} are not taken")
        handled: set[str] = set()
        for side in self.sides:
            if extra := sorted(set(side.handlers) - self.takes):
                raise ValueError(f"{side.__name__} handles {extra}, which {where} is never sent "
                                 f"({self.message_type.__name__} has {sorted(declared)})")
            handled |= set(side.handlers)
        if missing := sorted(self.takes - handled):
            raise ValueError(f"{where} needs a handler for {missing}: no side ({', '.join(s.__name__ for s in self.sides)}) "
                             "has one")


def message_kinds(message_type) -> list[str]:
    """The kinds a protocol's message can carry: the fields of its `body` oneof."""
    return [field.name for field in message_type.DESCRIPTOR.oneofs_by_name["body"].fields]


def start_hosts(protocols: dict[str, RoleProtocol], hosted: Collection[Identity]) -> None:
    """A role process's start-up: each protocol prepares what its first session would otherwise wait for."""
    for protocol in protocols.values():
        protocol.start_host(hosted)


def registry(*protocols: RoleProtocol) -> dict[str, RoleProtocol]:
    names = [p.name for p in protocols]
    if len(set(names)) != len(names):
        raise ValueError(f"a protocol is registered twice: {names}")
    return {p.name: p for p in protocols}
