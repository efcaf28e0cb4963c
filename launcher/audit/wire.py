"""`mpdp audit … --wire-sample N`: N releases over real processes (every role its own process, mutual TLS, test
mode so the parties disclose what they drew), each of which must equal the in-process reference computation
that the audit samples — so the audited mechanism is the one the network runs. What equal means is each protocol's
(its registry entry's `Audit.wire`: launcher/protocols/<name>/wire_check.py); the others' integration tests assert
the same equality.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from launcher.common.progress import progress

PARTIES = 3


def samplers() -> dict:
    """The protocols whose audit entry has a wire check, and the check: the registry's `Audit.wire`."""
    from launcher.registry import PROTOCOLS

    return {name: p.audit.wire for name, p in PROTOCOLS.items() if p.audit is not None and p.audit.wire is not None}


def wire_sample(protocol: str, mechanism: str, epsilon: float, delta: float, sessions: int, bits: int) -> dict:
    checks = samplers()
    if protocol not in checks:
        raise ValueError(f"--wire-sample runs for {' and '.join(checks)}; {protocol}'s integration tests check "
                         "the same equality")
    from launcher.common.client import load_client_data
    from launcher.deployment import processes
    from mpdp.learning import datasets
    from mpdp.privacy.ledger import UNLIMITED

    check, tolerance = checks[protocol]
    differences = []
    with tempfile.TemporaryDirectory(prefix="mpdp-audit-wire-") as run_dir:
        progress(f"wire sample: {PARTIES} parties as separate processes ({bits}-bit keys), {sessions} sessions")
        topology = processes.up(Path(run_dir), PARTIES, bits, datasets.load("breast-cancer"), seed=7,
                                model="logistic", test_mode=True, budget=UNLIMITED,
                                allow_unproven=True)  # repeated releases of the audited mechanism, laplace-paper too
        try:
            client_data = load_client_data(processes.RunDirectory(Path(run_dir)).client_data)
            for session in range(1, sessions + 1):
                differences.append(check(topology, client_data, mechanism, epsilon, delta, session))
        finally:
            processes.down(Path(run_dir))
    return {"sessions": sessions, "key_bits": bits, "parties": PARTIES,
            "max_abs_difference": max(differences), "tolerance": tolerance,
            "matches": all(d <= tolerance for d in differences)}
