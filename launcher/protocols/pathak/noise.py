"""Pathak's release against its noise before a session (`launcher/common/noise_check.py` says how the check reads)."""

from __future__ import annotations

import dataclasses

import numpy as np

from launcher.common import noise as shared
from launcher.protocols.pathak import preview, session_parameters
from mpdp.learning import evaluation
from mpdp.learning import noise_spread as spreads


def release(args, parties: int, client_data: dict, topology=None) -> dict | None:
    """The noise against the release's signal: where this launcher holds the parties' data, the spread of the
    scores of η (drawn as the session draws it) against that of the release without noise on the same rows
    (launcher/protocols/pathak/preview.py); else E‖η‖ against the largest ‖w‖ the regulariser allows."""
    sizes = shared.party_sizes(client_data)
    if not sizes:
        return None
    smallest, d = min(sizes), shared.dimension(client_data)
    fix = "raise λ (--lambda), ε, or the smallest party's rows (--split even)"
    seen = _previewed(args, parties, d, smallest, topology, client_data)
    if seen is not None:
        read = "every party's" if seen.parties_read == parties else f"{seen.parties_read} randomly chosen parties'"
        return shared.judged(
            "Pathak output perturbation", seen.noise, max(seen.signal, 1e-12),
            f"median over {preview.DRAWS} draws of η, as the session draws it at n_(1) = {smallest}, of the std of "
            f"η·x, against the std of ŵ·x without noise, over {seen.rows} of the parties' rows; ŵ the average of "
            f"{read} local models, previewed from the operator's copy of their data", fix, parties,
            signal_name="the scores' spread without noise", short="score spread without noise",
            noise_name="noise std on a score")
    delta = 2 / (smallest * args.regularization)  # Δ = 2/(n_(1)·λ)
    if getattr(args, "calibration", "paper") == "tight":
        delta /= parties
    noise = d * delta / args.epsilon
    signal = shared.weight_bound(args.regularization)
    return shared.judged("Pathak output perturbation", noise, signal,
                  f"D·Δ/ε with Δ = 2/(n_(1)·λ), n_(1) = {smallest}; without the parties' data here, against the "
                  "largest model the regulariser allows", fix, parties)


def _previewed(args, parties: int, dimension: int, smallest: int, topology, client_data: dict):
    """The operator's preview at these options, or None (no data here, more than two classes, or options a
    session would refuse: its own refusal says why)."""
    if topology is None or int(client_data.get("classes", 2)) != 2:
        return None
    try:
        chosen = session_parameters.parameters(args, parties, dimension)
    except (AttributeError, TypeError, ValueError):
        return None
    return preview.preview(chosen, topology, smallest)


def check(args, topology, client_data: dict) -> dict | None:
    return release(args, len(topology.parties), client_data, topology)


def spread(report: dict, topology, client_data: dict) -> dict:
    """η = ζ/(2^F·K): the selected party's noise at n_(1), or every party's share (distributed)."""
    from mpdp.protocols.pathak.parameters import PathakParameters

    given = report["parameters"]
    parameters = PathakParameters(**{f.name: given[f.name] for f in dataclasses.fields(PathakParameters)})
    if parameters.calibrate_to == "n_min" or parameters.distributed:
        records = parameters.n_min
    else:  # n_(1) is hidden from the client; the operator's data files know it
        parts = shared.parts(topology)
        if parts is None:
            return spreads.unavailable("the noise is calibrated to n_(1), which only the parties' data files "
                                      "(not here) tell")
        records = min(len(y) for _, y in parts)
    w = np.asarray(report["result"]["w"], dtype=float)
    return spreads.around_release(w, lambda k: preview.noise_vector(parameters, records, f"mpdp/noise-spread/{k}"),
                                  client_data["test_features"], client_data["test_labels"],
                                  evaluation.public_rows(client_data), f"Pathak's {parameters.mechanism} noise")
