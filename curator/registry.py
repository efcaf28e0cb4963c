"""The protocols Charlie takes part in: one line each."""

from __future__ import annotations

from cryptocore.paillier import KeyPair
from curator import pathak
from sessions.protocol import RoleProtocol, registry


def protocols(zeta: KeyPair, *extra: RoleProtocol) -> dict[str, RoleProtocol]:
    return registry(
        pathak.protocol(zeta),
        *extra,
    )
