"""`mpdp audit … --wire-sample N`: N releases over real processes (every role its own process, mutual TLS, test
mode so the parties disclose what they drew), each of which must equal the in-process reference computation
that the audit samples — so the audited mechanism is the one the network runs.

- DPPP: the released histograms equal Σ votes + Σ shares − K′·offset computed from the teachers' own records,
  and every share lies in the calibrated range.
- Pathak: with seeded noise streams, ŵˢ equals the reference (average of the local models plus the selected
  party's noise, or plus every share when distributed) within 2^−20 per coordinate.
Hamm and Du are not sampled here; their integration tests assert the same equality.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import numpy as np

from launcher.common.progress import progress

PARTIES = 3


def _dppp(topology, client_data, noise: str, epsilon: float, delta: float, session: int) -> float:
    from launcher.protocols.dppp.client import run_dppp_session, test_records
    from mpdp.protocols.dppp.reference import noisy_histograms

    report = asyncio.run(run_dppp_session(topology, client_data, epsilon, delta, 8, deadline_s=60.0, noise=noise))
    records = asyncio.run(test_records(topology, report["session_id"]))
    contributors = report["result"]["contributors"]
    classes = report["parameters"]["classes"]
    share_range = (2 * report["privacy"]["truncation_bound"] if noise == "skellam"
                   else report["privacy"]["tosses_per_teacher"])
    votes = [np.array(records[i].votes).reshape(8, classes) for i in contributors]
    shares = [np.array(records[i].noise).reshape(8, classes) for i in contributors]
    if not all(np.all((z >= 0) & (z <= share_range)) for z in shares):
        return float("inf")
    expected = noisy_histograms(votes, shares, share_range)
    return float(np.max(np.abs(np.array(report["result"]["histograms"]) - expected)))


def _pathak(topology, client_data, mechanism: str, epsilon: float, delta: float, session: int) -> float:
    from launcher.protocols.pathak.client import run_pathak_session
    from mpdp.learning import datasets
    from mpdp.protocols.pathak.parameters import PathakParameters
    from mpdp.protocols.pathak.reference import seeded_release

    sizes = [int(s) for s in client_data["party_sizes"]]
    parameters = PathakParameters.for_noise(mechanism, epsilon, delta, 0.01, "tight", len(sizes),
                                            client_data["test_features"].shape[1], noise_seed=session,
                                            n_min=min(sizes), deadline_seconds=120.0)
    report = asyncio.run(run_pathak_session(topology, client_data, parameters))
    parts = [datasets.load_part(entry.data)[:2] for entry in topology.parties]
    expected = seeded_release(parameters, parts, session)
    return float(np.max(np.abs(np.array(report["result"]["w"]) - expected)))


SAMPLERS = {"dppp": (_dppp, 0.0), "pathak": (_pathak, 2.0**-20)}


def wire_sample(protocol: str, mechanism: str, epsilon: float, delta: float, sessions: int, bits: int) -> dict:
    if protocol not in SAMPLERS:
        raise ValueError(f"--wire-sample runs for {' and '.join(SAMPLERS)}; {protocol}'s integration tests check "
                         "the same equality")
    from launcher.common.client import load_client_data
    from launcher.deployment import processes
    from mpdp.learning import datasets
    from mpdp.privacy.ledger import UNLIMITED

    check, tolerance = SAMPLERS[protocol]
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
