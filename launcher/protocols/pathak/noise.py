"""Pathak's release against its noise before a session (`launcher/common/noise_check.py` says how the check reads)."""

from __future__ import annotations

import dataclasses

import numpy as np

from launcher.common import noise as shared
from launcher.protocols.pathak import preview, session_parameters
from mpdp.learning import evaluation
from mpdp.learning import noise_spread as spreads


def release(args, parties: int, client_data: dict, topology=None) -> dict | None:
    """E‖η‖ against the largest ‖w‖ the regulariser allows, which decides; and, where this launcher holds the
    parties' data, the operator's preview of the release's own scores beside it (launcher/protocols/pathak/
    preview.py), which warns where it reads above 1× and the bound does not. The bound read 0.6–1.3× the preview
    on breast cancer and a9a, 0.27× on a skewed three-party table (docs/data-and-metrics.md); the stop stays on the
    bound, against which its thresholds were set."""
    sizes = shared.party_sizes(client_data)
    if not sizes:
        return None
    smallest, d = min(sizes), shared.dimension(client_data)
    delta = 2 / (smallest * args.regularization)  # Δ = 2/(n_(1)·λ)
    if getattr(args, "calibration", "paper") == "tight":
        delta /= parties
    noise = d * delta / args.epsilon
    signal = shared.weight_bound(args.regularization)
    fix = "raise λ (--lambda), ε, or the smallest party's rows (--split even)"
    judged = shared.judged("Pathak output perturbation", noise, signal,
                           f"D·Δ/ε with Δ = 2/(n_(1)·λ), n_(1) = {smallest}", fix, parties)
    seen = _previewed(args, parties, d, smallest, topology, client_data)
    if seen is not None:
        read = "every party's" if seen.parties_read == parties else f"{seen.parties_read} randomly chosen parties'"
        ratio = seen.noise / max(seen.signal, 1e-12)
        judged["preview"] = {"noise": seen.noise, "signal": seen.signal, "ratio": ratio, "formula": (
            f"median over {preview.DRAWS} draws of η, as the session draws it, of the std of η·x, against the std "
            f"of ŵ·x without noise, over {seen.rows} of the parties' rows; ŵ the average of {read} local models, "
            "previewed from the operator's copy of their data")}
        if ratio > shared.NOISY and not judged["warnings"]:
            judged["warnings"].append(
                f"Pathak output perturbation: the release's own scores, previewed from the operator's copy of the "
                f"parties' data, read the noise on a score as {ratio:.3g}× their spread without noise, where the "
                f"bound reads {judged['ratio']:.2g}×: one noise draw decides the result (`--repeat R` shows the "
                f"spread): {fix}")
    return judged


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
