"""In-process reference computation of Pathak's result: K·2^F·ŵˢ = Σ_j round(2^F·ŵ_j) + ζ_{j*},
with j* the party of the smallest n_j (ties to the lowest index) and ζ_{j*} its noise
for the sum, drawn on the integer grid at the sum's scale — exactly as the protocol
computes it."""

from __future__ import annotations

import numpy as np


def smallest_party(records: list[int]) -> int:
    """1-based index of the smallest data set (the tie-break n′_j = n_j·2^κ + (j − 1))."""
    return min(range(len(records)), key=lambda j: (records[j], j)) + 1


def perturbed_average(models: list[np.ndarray], noises: list[list[int]], records: list[int], fractional_bits: int) -> np.ndarray:
    """ŵˢ; `noises[j]` is party j's ζ_j (the sum's noise, grid units)."""
    scale = 2**fractional_bits
    selected = smallest_party(records)
    total = [sum(column) for column in zip(*(encode_model(w, fractional_bits) for w in models))]
    k = len(models)
    combined = [t + z for t, z in zip(total, noises[selected - 1])]
    return np.array(combined, dtype=float) / scale / k


def distributed_average(models: list[np.ndarray], shares: list[list[int]], fractional_bits: int) -> np.ndarray:
    """ŵˢ with distributed noise: every party's share (grid units) is in the sum."""
    total = [sum(column) for column in zip(*(encode_model(w, fractional_bits) for w in models), *shares)]
    return np.array(total, dtype=float) / 2**fractional_bits / len(models)


def encode_model(w: np.ndarray, fractional_bits: int) -> list[int]:
    return [round(float(x) * 2**fractional_bits) for x in w]


def seeded_release(parameters, parts: list[tuple[np.ndarray, np.ndarray]], seed: int) -> np.ndarray:
    """ŵˢ exactly as a networked session with `noise_seed = seed` computes it, from the parties' data:
    the selected party's noise, or every party's share (distributed)."""
    from mpdp.learning.pathak_local import train
    from mpdp.protocols.pathak.noise import noise_source

    models = [train(x, y, parameters.regularization, parameters.gradient_tolerance) for x, y in parts]
    noises = [parameters.draw_noise(len(y), noise_source(seed, j)) for j, (_, y) in enumerate(parts, start=1)]
    if parameters.distributed:
        return distributed_average(models, noises, parameters.fractional_bits)
    return perturbed_average(models, noises, [len(y) for _, y in parts], parameters.fractional_bits)
