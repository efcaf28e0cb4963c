"""One party's step of round k (du.md, "Rounds"): from the server's θ_k, minimise this round's perturbed
local objective (fresh noise every round) and return θ_ik, clipped to [−B, B] and on the grid 2^−F.

From the warm start θ_k (an exact argmin would make it meaningless), `local_epochs` epochs of ⌈n_i/batch⌉
projected steps each, on the objective divided by n_i: mini-batch SGD over a shuffled pass for the sum
forms (none, ofpa: the batch's mean loss plus the whole noise term vᵀw/n_i), full gradient steps of size
1/L for the noisy quadratics (ofaa, functional: their gradient costs (d+1)², not n_i). objective: the exact
minimiser (Newton, ‖∇J‖ ≤ γ), because objective perturbation's guarantee is for the minimiser; the warm
start then only shortens the solve.
"""

from __future__ import annotations

import math
import random

import numpy as np

from mpdp.privacy.samplers import l2_laplace, laplace
from mpdp.protocols.du import objectives
from mpdp.protocols.du.parameters import FRACTIONAL_BITS, DuParameters

NEWTON_TOLERANCE = 1e-9
MAX_NEWTON_STEPS = 100


def on_grid(theta: np.ndarray, bound: float) -> np.ndarray:
    scale = float(2**FRACTIONAL_BITS)
    return np.round(np.clip(theta, -bound, bound) * scale) / scale


def noise_source(noise_seed: int, party: int, round_number: int) -> random.Random:
    """Party `party`'s stream in round k: seeded only for the reference check (test mode)."""
    return random.Random(f"mpdp/du/{noise_seed}/{party}/{round_number}") if noise_seed else random.SystemRandom()


def _descend(gradient, theta: np.ndarray, step: float, epochs: int, bound: float) -> np.ndarray:
    for _ in range(epochs):
        theta = np.clip(theta - step * gradient(theta), -bound, bound)
    return theta


def _quadratic_step(quadratic: objectives.Quadratic, records: int, rate: float) -> float:
    """The learning rate, capped at 1/L of the mean objective (L = 2·λ_max(A)/n_i) so descent is stable."""
    largest = float(np.linalg.eigvalsh(quadratic.A)[-1])
    return min(rate, records / (2 * largest)) if largest > 0 else rate


def _repair_floor(parameters: DuParameters, records: int) -> float:
    """A's eigenvalues are raised to λ·n_i/2 (1e-6·n_i/2 when λ = 0): the mean objective is λ-strongly convex."""
    return max(parameters.regularization, 1e-6) * records / 2


def _objective_perturbation(parameters: DuParameters, features: np.ndarray, labels: np.ndarray,
                            theta: np.ndarray, source: random.Random) -> np.ndarray:
    """Chaudhuri et al. 2011, Algorithm 2, in z = x̃/√2 (‖z‖₂ ≤ 1), φ = √2·θ, labels ±1."""
    from scipy.special import expit

    z = features / math.sqrt(2)
    signs = 2 * labels - 1
    n, size = z.shape
    lam = parameters.regularization
    scales = noise_scales(parameters, n)
    b = l2_laplace(size, scales["norm"], source)
    extra = scales["extra_regularization"]
    phi = theta * math.sqrt(2)
    for _ in range(MAX_NEWTON_STEPS):
        margins = signs * (z @ phi)
        p = expit(-margins)
        gradient = -(z.T @ (signs * p)) / n + (lam + extra) * phi + b / n
        if np.linalg.norm(gradient) <= NEWTON_TOLERANCE:
            break
        hessian = (z.T * (p * (1 - p))) @ z / n + (lam + extra) * np.eye(size)
        phi = phi - np.linalg.solve(hessian, gradient)
    return phi / math.sqrt(2)


def noise_scales(parameters: DuParameters, records: int) -> dict[str, float]:
    """The scales `local_update` draws its noise with (read by the audit's exact check): Laplace scales of the
    linear and quadratic coefficients (ofaa, functional) or of v on w (ofpa; α gets none), or the norm scale of b
    and the regularisation Δ it adds to λ (objective)."""
    method, epsilon = parameters.method, parameters.epsilon
    if method == "ofpa":
        return {"w": objectives.OFPA_SCALE_NUMERATOR / epsilon, "α": 0.0}
    if method == "ofaa":
        return {"linear": objectives.OFAA_SCALES[1] / epsilon, "quadratic": objectives.OFAA_SCALES[2] / epsilon}
    if method == "functional":
        return {"linear": objectives.FUNCTIONAL_SENSITIVITY / epsilon,
                "quadratic": objectives.FUNCTIONAL_SENSITIVITY / epsilon}
    if method == "objective":
        epsilon_prime, extra = objectives.objective_perturbation_terms(epsilon, records, parameters.regularization)
        return {"norm": 2 / epsilon_prime, "extra_regularization": extra}
    return {}


def local_update(parameters: DuParameters, features: np.ndarray, labels: np.ndarray, theta: np.ndarray,
                 source: random.Random) -> np.ndarray:
    """θ_ik from θ_k on this party's (x̃, y); `features` already augmented (objectives.augment)."""
    method, records = parameters.method, len(labels)
    theta = np.asarray(theta, dtype=float)
    rate, epochs, bound = parameters.learning_rate, parameters.local_epochs, parameters.bound
    batch = min(parameters.batch_size, records)
    steps_per_epoch = -(-records // batch)
    if method in ("none", "ofpa"):
        linear = np.zeros(parameters.weights)
        if method == "ofpa":  # v_ik on w only: the paper puts no noise on α
            linear[:-1] = laplace(noise_scales(parameters, records)["w"], parameters.dimension, source)
        shuffler = np.random.default_rng(source.getrandbits(64))
        for _ in range(epochs):
            order = shuffler.permutation(records)
            for start in range(0, records, batch):
                rows = order[start:start + batch]
                gradient = objectives.logistic_sum_gradient(theta, features[rows], labels[rows]) / len(rows)
                theta = np.clip(theta - rate * (gradient + linear / records), -bound, bound)
        result = theta
    elif method in ("ofaa", "functional"):
        exact = objectives.taylor(features, labels)
        scales = noise_scales(parameters, records)
        quadratic = exact.perturbed(scales["linear"], scales["quadratic"], source).convex(
            _repair_floor(parameters, records))
        step = _quadratic_step(quadratic, records, rate)
        result = _descend(lambda t: quadratic.gradient(t) / records, theta, step, epochs * steps_per_epoch, bound)
    elif method == "objective":
        result = _objective_perturbation(parameters, features, labels, theta, source)
    else:
        raise ValueError(f"unknown method {method!r}")
    return on_grid(result, bound)
