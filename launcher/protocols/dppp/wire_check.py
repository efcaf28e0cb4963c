"""`mpdp audit dppp --wire-sample N` (launcher/audit/wire.py): one DPPP release over real processes against the
reference. The released histograms must equal Σ votes + Σ shares − K′·offset computed from the teachers' own
records (disclosed in test mode), and every share must lie in the calibrated range."""

from __future__ import annotations

import asyncio

import numpy as np


def difference(topology, client_data, noise: str, epsilon: float, delta: float, session: int) -> float:
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
