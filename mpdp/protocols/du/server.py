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


def released(parameters, round_models: list[np.ndarray]) -> np.ndarray:
    """The released θ: with a noisy method, the mean of the rounds' averages θ_1..θ_R. Each round draws fresh
    noise around the same objective, and every round is charged (R·ε), so averaging them is post-processing that
    shrinks the noise about √R-fold where the last round alone can be far off (data-and-metrics.md, "One
    dominant heavy-tailed column"). Without noise (`none`) the last average, the most trained one."""
    if not round_models:
        return np.zeros(parameters.weights)
    if not parameters.private:
        return round_models[-1]
    return np.mean(np.stack(round_models), axis=0)
