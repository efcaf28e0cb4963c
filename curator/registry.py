"""The protocols Charlie takes part in: one line each."""

from __future__ import annotations

from curator import hamm, pathak
from curator.resources import CuratorResources
from mpdp.sessions.protocol import RoleProtocol, registry


def protocols(own: CuratorResources, *extra: RoleProtocol) -> dict[str, RoleProtocol]:
    return registry(
        pathak.protocol(own.charlies_key),
        hamm.protocol(own),
        *extra,
    )
