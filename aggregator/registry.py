"""The protocols the aggregator takes part in: one line each."""

from __future__ import annotations

from aggregator import dppp, du, hamm
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.sessions.protocol import RoleProtocol, registry
from mpdp.threshold_sum.binding import ContributionKeys


def protocols(public_key: ThresholdPublicKey, teachers: list[int], key_holders: list[int],
              *extra: RoleProtocol, keys: ContributionKeys | None = None) -> dict[str, RoleProtocol]:
    """`keys` checks the parties' signed contributions as they arrive (None: a plaintext deployment)."""
    return registry(
        dppp.protocol(public_key, teachers, key_holders, keys),
        hamm.protocol(public_key, teachers, key_holders, keys),
        du.protocol(public_key, teachers, key_holders, keys),
        *extra,
    )
