"""`mpdp audit <protocol>`: the exact ε of the noise a protocol's release samples and an empirical lower bound,
by the audit of the protocol's registry entry (launcher/audit/counts.py builds the report)."""

from __future__ import annotations

import time

from launcher.audit.counts import BROKEN
from launcher.common.progress import progress
from mpdp.privacy.collusion import COLLUDING_CONTRIBUTORS


def default_noise() -> dict[str, str]:
    """The audited protocols of the registry and the mechanism each is audited with unless one is named."""
    from launcher.registry import PROTOCOLS

    return {name: protocol.audit_noise for name, protocol in PROTOCOLS.items() if protocol.audit_noise is not None}


def run(protocol: str, noise: str | None, epsilon: float, delta: float, trials: int, broken: str | None,
        colluding: int = COLLUDING_CONTRIBUTORS) -> dict:
    from launcher.registry import PROTOCOLS

    audited = default_noise()
    if protocol not in audited:
        raise ValueError(f"audits exist for {', '.join(audited)}")
    if trials < 100:
        raise ValueError("--trials must be at least 100")
    if broken is not None and broken not in BROKEN:
        raise ValueError(f"--broken must be one of {', '.join(BROKEN)}")
    noise = noise or audited[protocol]
    audit = PROTOCOLS[protocol].audit
    if audit is None:
        raise ValueError(f"{protocol} names a default audit noise but no audit")
    if noise not in audit.mechanisms:
        raise ValueError(f"{protocol}'s audit takes --noise {' | '.join(audit.mechanisms)}, not {noise!r}")
    if colluding != COLLUDING_CONTRIBUTORS and not audit.colluding:
        shared = [name for name, entry in PROTOCOLS.items() if entry.audit is not None and entry.audit.colluding]
        raise ValueError(f"--teachers-per-party applies to the {' and '.join(shared)} audits (their noise is shared)")
    started = time.perf_counter()
    progress(f"auditing {protocol} ({noise}{', broken: ' + broken if broken else ''}): {trials} releases per "
             "data set")
    result = audit.run(noise, epsilon, delta, trials, broken=broken,
                       **({"colluding": colluding} if audit.colluding else {}))
    result["seconds"] = time.perf_counter() - started
    return result
