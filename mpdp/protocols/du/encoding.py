"""Secure aggregation's plaintexts (du.md "Beyond the paper"; crypto.md packing and fixed point): a party
packs (n_i·θ_ik·2^F, n_i) — integers, since θ_ik is on the grid 2^−F and clipped to [−B, B] — and the
server decrypts only the sums Σ n_i·θ_ik·2^F and Σ n_i."""

from __future__ import annotations

import math

import numpy as np

from mpdp.cryptocore.encodings.packing import SlotLayout
from mpdp.cryptocore.errors import EncodingOverflow
from mpdp.protocols.du.parameters import FRACTIONAL_BITS, MAX_RECORDS, DuParameters


def layout(parameters: DuParameters, n: int) -> SlotLayout:
    """Slots for |n_i·θ·2^F| ≤ MAX_RECORDS·B·2^F, summed over K parties."""
    largest = MAX_RECORDS * math.ceil(parameters.bound * 2**FRACTIONAL_BITS)
    return SlotLayout.for_modulus(n, largest.bit_length() + 1, parameters.parties)


def values(parameters: DuParameters) -> int:
    return parameters.weights + 1  # n_i·θ (d + 1) and n_i


def encode(parameters: DuParameters, records: int, theta: np.ndarray) -> list[int]:
    if not 1 <= records <= MAX_RECORDS:
        raise EncodingOverflow(f"n_i = {records} outside [1, {MAX_RECORDS}]")
    if np.max(np.abs(theta)) > parameters.bound:
        raise EncodingOverflow("θ outside [−B, B]")
    scaled = np.round(np.asarray(theta) * 2**FRACTIONAL_BITS)
    if not np.array_equal(scaled / 2**FRACTIONAL_BITS, theta):
        raise EncodingOverflow("θ is not on the grid 2^−F")
    return [records * int(v) for v in scaled] + [records]


def decode(parameters: DuParameters, sums: list[int]) -> np.ndarray:
    """Σ n_i·θ_ik / Σ n_i from the decrypted slot sums."""
    total = sums[-1]
    if not 1 <= total <= parameters.parties * MAX_RECORDS:
        raise EncodingOverflow(f"Σ n_i = {total} is not a possible total")
    return np.array([s / total for s in sums[:-1]]) / 2**FRACTIONAL_BITS
