"""The protocols the aggregator takes part in: one line each."""

from __future__ import annotations

from aggregator import dppp, du, hamm
from cryptocore.threshold import ThresholdPublicKey
from sessions.protocol import RoleProtocol, registry


def protocols(public_key: ThresholdPublicKey, teachers: list[int], key_holders: list[int],
              *extra: RoleProtocol) -> dict[str, RoleProtocol]:
    return registry(
        dppp.protocol(public_key, teachers, key_holders),
        hamm.protocol(public_key, teachers, key_holders),
        du.protocol(public_key, teachers, key_holders),
        *extra,
    )
