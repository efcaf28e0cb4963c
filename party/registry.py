"""The protocols a party takes part in: one line each."""

from __future__ import annotations

from typing import Callable

from mpdp.sessions.identity import Identity
from mpdp.sessions.protocol import RoleProtocol, registry
from party import dppp, du, hamm, pathak
from party.resources import PartyResources


def protocols(resources: Callable[[Identity], PartyResources], *extra: RoleProtocol) -> dict[str, RoleProtocol]:
    return registry(
        dppp.protocol(resources),
        pathak.protocol(resources),
        hamm.protocol(resources),
        du.protocol(resources),
        *extra,
    )
