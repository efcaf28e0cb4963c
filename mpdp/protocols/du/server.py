"""The server's step of each round (du.md, "Rounds"): the n_i-weighted average and the stop rule."""

from __future__ import annotations

import numpy as np


def weighted_average(uploads: dict[int, tuple[int, np.ndarray]]) -> np.ndarray:
    """θ_{k+1} = Σ_i n_i·θ_ik / Σ_i n_i over the parties that uploaded this round."""
    total = sum(records for records, _ in uploads.values())
    return np.sum([records * theta for records, theta in uploads.values()], axis=0) / total


def converged(previous: np.ndarray, current: np.ndarray, tolerance: float) -> bool:
    """‖θ_{k+1} − θ_k‖₂ ≤ η (η = 0 never stops early)."""
    return tolerance > 0 and float(np.linalg.norm(current - previous)) <= tolerance
