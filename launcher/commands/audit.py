"""`mpdp audit <protocol>`: the exact ε of the noise a protocol's release samples and an empirical lower bound,
by the audit of the protocol's registry entry (launcher/audit/counts.py builds the report)."""

from __future__ import annotations

import time
from pathlib import Path

from launcher.audit.counts import BROKEN
from launcher.common.options import DEFAULT_KEY_BITS, key_bits, print_summary, write_json
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


def add_command(commands) -> None:
    """`mpdp audit`: its options."""
    audit = commands.add_parser("audit", help="the exact ε of the sampled noise and an empirical lower bound on "
                                "ε beside the claimed ε (exit 1 if either is above)")
    from launcher.audit.wire import samplers
    from launcher.registry import PROTOCOLS

    audits = {name: p for name, p in PROTOCOLS.items() if p.audit_noise is not None}
    shared = ", ".join(name for name, p in audits.items() if p.audit is not None and p.audit.colluding)
    audit.add_argument("protocol", choices=list(audits))
    audit.add_argument("--noise", help="the audited mechanism: " + ", ".join(
        f"{' | '.join(p.audit.mechanisms if p.audit else (str(p.audit_noise),))} ({name}; default {p.audit_noise})"
        for name, p in audits.items()))
    audit.add_argument("--epsilon", type=float, default=1.0, help="the claimed ε of the audited release (default 1)")
    audit.add_argument("--delta", type=float, default=1e-5, help="default 1e-5")
    audit.add_argument("--trials", type=int, default=20_000, help="releases per data set (default 20 000)")
    audit.add_argument("--broken", choices=["no-noise", "coarse-grid", "quarter-tosses", "claim-mismatch",
                                            "half-sensitivity"],
                       help="audit a deliberately broken mechanism instead (the audit must catch it): no noise, noise "
                            f"on K·ℤ, a quarter of the Binomial tosses ({shared}), noise calibrated to 4ε claimed as "
                            "ε, the sensitivity halved (docs/audit.md: which audits plant each)")
    audit.add_argument("--teachers-per-party", type=int, default=1, metavar="T",
                       help=f"{shared}: T contributors per data owner (as `up --teachers-per-party`): the audit "
                            "counts the noise of a decryptable sum without one owner's T shares (default 1)")
    audit.add_argument("--wire-sample", type=int, default=0, metavar="N",
                       help=f"also run N releases over real processes ({', '.join(samplers())}) that must equal the "
                            "audited reference computation")
    audit.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS, help="key size of the wire sample")
    audit.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    audit.set_defaults(handler=command)


def command(args) -> int:
    from launcher.audit import counts

    report = run(args.protocol, args.noise, args.epsilon, args.delta, args.trials, args.broken,
                       args.teachers_per_party)
    if args.wire_sample:
        from launcher.audit import wire as audit_wire

        report["wire_sample"] = audit_wire.wire_sample(args.protocol, report["noise"]["mechanism"], args.epsilon,
                                                       args.delta, args.wire_sample, args.bits)
    print_summary(counts.summary(report), args.json)
    write_json(args.json, report)
    args.json_report = report
    return 1 if report["exceeds_claim"] or not report.get("wire_sample", {"matches": True})["matches"] else 0
