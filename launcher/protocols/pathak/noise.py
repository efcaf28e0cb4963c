"""Pathak's release against its noise before a session (`launcher/common/noise_check.py` says how the check reads)."""

from __future__ import annotations

import dataclasses
import random

import numpy as np

from launcher.common import noise as shared
from mpdp.learning import evaluation
from mpdp.learning import noise_spread as spreads


def release(args, parties: int, client_data: dict) -> dict | None:
    sizes = shared.party_sizes(client_data)
    if not sizes:
        return None
    smallest, d = min(sizes), shared.dimension(client_data)
    delta = 2 / (smallest * args.regularization)  # Δ = 2/(n_(1)·λ)
    if getattr(args, "calibration", "paper") == "tight":
        delta /= parties
    noise = d * delta / args.epsilon
    signal = shared.weight_bound(args.regularization)
    return shared.judged("Pathak output perturbation", noise, signal,
                  f"D·Δ/ε with Δ = 2/(n_(1)·λ), n_(1) = {smallest}", "raise λ (--lambda), ε, or the smallest party's "
                  "rows (--split even)", parties)


def check(args, topology, client_data: dict) -> dict | None:
    return release(args, len(topology.parties), client_data)


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
    scale = 2.0 ** parameters.fractional_bits * parameters.parties
    shares = parameters.parties if parameters.distributed else 1

    def draw(k: int) -> np.ndarray:
        total = np.zeros(parameters.dimension)
        for j in range(shares):
            total += np.asarray(parameters.draw_noise(records, random.Random(f"mpdp/noise-spread/{k}/{j}")),
                                dtype=float)
        return total / scale

    w = np.asarray(report["result"]["w"], dtype=float)
    return spreads.around_release(w, draw, client_data["test_features"], client_data["test_labels"],
                                 evaluation.public_rows(client_data), f"Pathak's {parameters.mechanism} noise")
