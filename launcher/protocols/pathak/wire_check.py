"""`mpdp audit pathak --wire-sample N` (launcher/audit/wire.py): one Pathak release over real processes against the
reference. With seeded noise streams, ŵˢ must equal the reference (average of the local models plus the selected
party's noise, or plus every share when distributed) within 2^−20 per coordinate."""

from __future__ import annotations

import asyncio

import numpy as np


def difference(topology, client_data, mechanism: str, epsilon: float, delta: float, session: int) -> float:
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
