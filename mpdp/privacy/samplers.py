"""Continuous noise from a caller's random stream (seeded only for reference checks, else the system's
CSPRNG): a Laplace vector and the `l2-laplace` vector of density ∝ exp(−‖η‖/scale)."""

from __future__ import annotations

import random

import numpy as np


def laplace(scale: float, size: int, source: random.Random) -> np.ndarray:
    """`size` independent Laplace(scale) values (a difference of two exponentials)."""
    return np.array([scale * (source.expovariate(1.0) - source.expovariate(1.0)) for _ in range(size)])


def l2_laplace(dimension: int, norm_scale: float, source: random.Random) -> np.ndarray:
    """η ∈ R^D with density ∝ exp(−‖η‖/scale): a uniform direction, ‖η‖ ~ Gamma(D, scale)."""
    direction = np.array([source.gauss(0.0, 1.0) for _ in range(dimension)])
    return source.gammavariate(dimension, norm_scale) * direction / np.linalg.norm(direction)
