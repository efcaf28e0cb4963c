"""`mpdp audit pathak`: the exact check of the noise its release really samples, then released model vectors
from two neighbouring data sets, many times, with the real samplers, and the attacks of mpdp/privacy/audit.py on them.

- Pathak: the release is K·2^F·ŵˢ = Σ_j round(2^F·ŵ_j) + ζ on the integer grid. The K parties' local models
  are trained (mpdp/learning/pathak_local.py) on 100 real records each (breast cancer, d = 4, rows in the unit
  ball), and again with one record of party 1 replaced — the replacement, among those tried, that moves its
  model most. The exact check reads ζ's scale from the sampler (the grid scale it passes to the exact discrete
  sampler, or the shares' variance) and takes the larger of the spec's sensitivity 2/(nλ) + 2γ/λ + √d·2^−F
  and the change measured on that neighbour. The empirical attack runs on two pairs: the real neighbours, and
  a change by the spec's full L2 sensitivity spread evenly over the coordinates (the L1-worst direction for
  per-coordinate noise); the integration tests check that the networked release equals this computation
  with the same noise streams. `distributed`: the K − 1 shares the accounting counts.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from launcher.audit.counts import CONFIDENCE, MISMATCH_FACTOR, report
from mpdp.privacy import spec_sensitivity
from mpdp.privacy.audit import AuditResult, epsilon_lower_bound
from mpdp.privacy.exact_audit import ExactCheck, gaussian_epsilon, l2_laplace_epsilon, laplace_epsilon, moments_agree
from mpdp.privacy.mechanisms import OutputPerturbation

PATHAK_BROKEN = ("no-noise", "coarse-grid", "claim-mismatch", "half-sensitivity")
PATHAK_RECORDS = 100  # n_(1) of the audited setting
PATHAK_REGULARIZATION = 0.01
REPLACEMENTS_TRIED = 8  # records of party 1 × outside records tried for the neighbour that moves ŵ_1 most


@dataclass(frozen=True)
class HalvedSensitivity(OutputPerturbation):
    """The planted `half-sensitivity` bug: the calibration's sensitivity function returns half the truth."""

    def model_sensitivity(self, records: int) -> float:
        return super().model_sensitivity(records) / 2


@dataclass(frozen=True)
class VectorNoise:
    """ζ as drawn, per coordinate on the integer grid: `draw` uses these fields, and the exact check reads them."""

    mechanism: str  # laplace-paper | l2-laplace | gaussian | distributed
    scale: float  # Laplace scale per coordinate; Gamma scale of ‖ζ‖; σ of the (each share's) discrete Gaussian
    clamp: int  # every coordinate (every share's) clamped to [−clamp, clamp]
    draw: Callable[[random.Random], list[int]]
    shares: int = 1  # distributed: shares summed
    lattice: int = 1  # ζ on lattice·ℤ (coarse-grid)
    silent: bool = False  # no-noise

    def moments(self, dimension: int) -> tuple[float, float]:
        """(variance, excess kurtosis) of one coordinate, as declared (clamping is negligible by construction)."""
        if self.silent:
            return 0.0, 0.0
        if self.mechanism == "laplace-paper":
            return self.lattice**2 * 2 * self.scale**2, 3.0
        if self.mechanism == "l2-laplace":  # E‖ζ‖² = d(d+1)b², spread over d coordinates
            return self.lattice**2 * (dimension + 1) * self.scale**2, 6.0
        return self.lattice**2 * self.shares * self.scale**2, 0.0

    def clamp_mass(self, dimension: int) -> float:
        """An upper bound on P(some coordinate of some share is clamped)."""
        if self.silent:
            return 0.0
        if self.mechanism == "laplace-paper":  # discrete Laplace: P(|ζ_i| > B) ≤ e^(−B/b)
            tail = math.exp(-self.clamp / self.scale)
        elif self.mechanism == "l2-laplace":
            from scipy.special import gammaincc  # |ζ_i| ≤ ‖ζ‖ ~ Gamma(d, b)

            return float(gammaincc(dimension, self.clamp / self.scale))
        else:
            tail = 2 * math.exp(-self.clamp**2 / (2 * self.scale**2))
        return min(1.0, dimension * self.shares * tail)


def _pathak_data(dimension: int, parties: int):
    """Breast cancer, the first d features, rows scaled into the unit ball; party j's n_(1) records, and outside
    records for the replacement."""
    from mpdp.learning import datasets

    data = datasets.load("breast-cancer")
    features = data.features[:, :dimension]
    features = features / np.linalg.norm(features, axis=1).max()
    inside = parties * PATHAK_RECORDS
    parts = [(features[j * PATHAK_RECORDS:(j + 1) * PATHAK_RECORDS], data.labels[j * PATHAK_RECORDS:
                                                                                 (j + 1) * PATHAK_RECORDS])
             for j in range(parties)]
    return parts, features[inside:], data.labels[inside:]


def pathak_neighbours(parameters, parties: int, dimension: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Σ_j round(2^F·ŵ_j) on D and on D′ (one record of party 1 replaced: the replacement, among those tried, that
    moves ŵ_1 most), and ‖ŵ_1 − ŵ_1′‖₂ measured."""
    from mpdp.learning.pathak_local import train

    parts, outside, outside_labels = _pathak_data(dimension, parties)
    scale = 2**parameters.fractional_bits

    def model(features: np.ndarray, labels: np.ndarray) -> np.ndarray:
        return train(features, labels, parameters.regularization, parameters.gradient_tolerance)

    encoded = [np.round(scale * model(*part)).astype(np.int64) for part in parts]
    first = model(*parts[0])
    best, moved = None, -1.0
    for row in range(REPLACEMENTS_TRIED):
        for other in range(REPLACEMENTS_TRIED):
            features, labels = parts[0][0].copy(), parts[0][1].copy()
            features[row], labels[row] = outside[other], outside_labels[other]
            if len(np.unique(labels)) < 2:
                continue
            candidate = model(features, labels)
            change = float(np.linalg.norm(candidate - first))
            if change > moved:
                best, moved = candidate, change
    assert best is not None
    sum_d = np.sum(encoded, axis=0)
    sum_d_prime = sum_d - encoded[0] + np.round(scale * best).astype(np.int64)
    return sum_d, sum_d_prime, moved


def _pathak_noise(mechanism: str, epsilon: float, delta: float, calibration: str, parties: int, dimension: int,
                  broken: str | None):
    from mpdp.privacy.distributed_gaussian import DistributedGaussian
    from mpdp.protocols.pathak.parameters import PathakParameters

    calibrate_epsilon = epsilon * (MISMATCH_FACTOR if broken == "claim-mismatch" else 1)
    parameters = PathakParameters.for_noise(mechanism, calibrate_epsilon, delta, PATHAK_REGULARIZATION, calibration,
                                            parties, dimension, n_min=PATHAK_RECORDS)
    perturbation = parameters.noise
    if broken == "half-sensitivity":
        perturbation = HalvedSensitivity(**{name: getattr(perturbation, name)
                                            for name in perturbation.__dataclass_fields__})
    if parameters.distributed:
        honest = parameters.distributed_noise
        assert honest is not None
        shares = honest if broken != "half-sensitivity" else DistributedGaussian(
            honest.epsilon, honest.delta, perturbation.sensitivity(PATHAK_RECORDS) * parties
            * 2**parameters.fractional_bits, dimension, parties, honest.mask_bits)

        def draw_shares(source: random.Random) -> list[int]:
            counted = [shares.sample(source) for _ in range(parties - 1)]  # the K − 1 the accounting counts
            return [sum(column) for column in zip(*counted)]

        noise = VectorNoise("distributed", math.sqrt(float(shares.share_variance)), shares.clamp_bound, draw_shares,
                            shares=parties - 1)
    else:
        noise = VectorNoise(mechanism, float(perturbation.grid_scale(PATHAK_RECORDS)), perturbation.clamp_bound_grid,
                            lambda source: perturbation.sample(PATHAK_RECORDS, source))
    if broken == "no-noise":
        noise = replace(noise, draw=lambda source: [0] * dimension, silent=True)
    elif broken == "coarse-grid":  # the first release's bug: noise on K·ℤ, so the release mod K is noise-free
        honest_draw = noise.draw
        noise = replace(noise, scale=noise.scale / parties, lattice=parties,
                        draw=lambda source: [parties * round(z / parties) for z in honest_draw(source)])
    return parameters, noise


def pathak_exact(noise: VectorNoise, parameters, epsilon: float, claimed_delta: float, dimension: int,
                 measured_shift: np.ndarray, measured_model_change: float, draws: np.ndarray) -> ExactCheck:
    grid = 2**parameters.fractional_bits
    spec = spec_sensitivity.pathak_model_l2(PATHAK_RECORDS, parameters.regularization,
                                            parameters.gradient_tolerance, dimension, parameters.fractional_bits)
    l2 = max(spec * grid, float(np.linalg.norm(measured_shift)))
    l1 = max(math.sqrt(dimension) * spec * grid, float(np.abs(measured_shift).sum()))
    clamp_delta = (1 + math.exp(epsilon)) * noise.clamp_mass(dimension)
    mechanism_delta = claimed_delta - clamp_delta
    if noise.silent:
        value, accountant = math.inf, "no noise"
    elif noise.lattice > 1:  # a neighbour's change of the sum is any integer vector of norm ≤ Δ: most are off it
        value, accountant = math.inf, f"noise on {noise.lattice}·ℤ: a change off that lattice separates the releases"
    elif mechanism_delta < -1e-9 * claimed_delta or (mechanism_delta <= 0 and noise.mechanism in ("gaussian",
                                                                                                 "distributed")):
        value, accountant = math.inf, "the clamp alone costs more than the claimed δ"
    elif noise.mechanism == "laplace-paper":
        value, accountant = laplace_epsilon(l1, noise.scale), "pure ε = Δ₁/b of per-coordinate Laplace"
    elif noise.mechanism == "l2-laplace":
        value, accountant = l2_laplace_epsilon(l2, noise.scale), "pure ε = Δ₂/b of the l2-Laplace density"
    elif noise.mechanism == "gaussian":
        value, accountant = (gaussian_epsilon(l2, noise.scale, mechanism_delta),
                             "dp-accounting Gaussian PLD at δ minus the clamp's share")
    else:
        from mpdp.privacy.distributed_gaussian import epsilon_of_rho, rho

        value = epsilon_of_rho(rho(l2, noise.scale**2, noise.shares, dimension), mechanism_delta)
        accountant = "Kairouz, Liu & Steinke 2021 Thm 1 for the sum of the K − 1 counted shares, RDP → (ε, δ)"
    variance, kurtosis = noise.moments(dimension)
    tolerance = 2e-4 if noise.mechanism in ("gaussian", "distributed") else 1e-9
    return ExactCheck(value, epsilon, claimed_delta, accountant,
                      {"mechanism": noise.mechanism, "scale_grid_units": noise.scale, "clamp": noise.clamp,
                       "shares": noise.shares, "lattice": noise.lattice, "clamp_delta": clamp_delta},
                      {"spec_l2": spec * grid, "measured_l2": float(np.linalg.norm(measured_shift)),
                       "measured_model_change": measured_model_change, "used_l2": l2, "used_l1": l1,
                       "spec_exceeded": float(np.linalg.norm(measured_shift)) > spec * grid},
                      moments_agree(draws, 0.0, variance, kurtosis), tolerance)


def audit_pathak(mechanism: str, epsilon: float, delta: float, trials: int, broken: str | None = None,
                 calibration: str = "tight", parties: int = 5, dimension: int = 4, seed: int = 2010) -> dict:
    if broken is not None and broken not in PATHAK_BROKEN:
        raise ValueError(f"Pathak's audit plants {', '.join(PATHAK_BROKEN)}, not {broken!r}")
    parameters, noise = _pathak_noise(mechanism, epsilon, delta, calibration, parties, dimension, broken)
    sum_d, sum_d_prime, model_change = pathak_neighbours(parameters, parties, dimension)
    real_shift = (sum_d_prime - sum_d).astype(float)
    spec = spec_sensitivity.pathak_model_l2(PATHAK_RECORDS, parameters.regularization, parameters.gradient_tolerance,
                                            dimension, parameters.fractional_bits) * 2**parameters.fractional_bits
    step = math.floor(spec / math.sqrt(dimension))  # the spec's full L2 change, evenly over the coordinates
    bound_shift = np.array([step - (1 if step % parties == 0 else 0)] * dimension, dtype=float)
    source = random.Random(seed)
    noise_d = np.array([noise.draw(source) for _ in range(trials)], dtype=float)
    noise_d_prime = np.array([noise.draw(source) for _ in range(trials)], dtype=float)
    if mechanism == "distributed":
        claimed_delta = parameters.guarantee().delta
        effective = parameters.guarantee().epsilon
    else:
        claimed_delta = parameters.noise.report()["delta"]
        effective = parameters.noise.effective_epsilon(PATHAK_RECORDS)
    exact = pathak_exact(noise, parameters, epsilon, claimed_delta, dimension, real_shift, model_change, noise_d)

    def statistics(releases: np.ndarray, origin: np.ndarray, shift: np.ndarray) -> dict[str, np.ndarray]:
        centred = releases - origin
        direction = shift / max(np.linalg.norm(shift), 1e-300)
        return {
            "projection on Δ": centred @ direction,
            "L1 likelihood ratio": np.abs(centred - shift).sum(axis=1) - np.abs(centred).sum(axis=1),
            "L2 distance ratio": np.linalg.norm(centred - shift, axis=1) - np.linalg.norm(centred, axis=1),
            f"coordinate 1 mod {parties}": np.mod(releases[:, 0], parties),
        }

    # Two neighbouring pairs, each tested at half the error probability (Bonferroni).
    pairs = {"real neighbours": (sum_d.astype(float), real_shift), "spec-bound change": (sum_d.astype(float),
                                                                                        bound_shift)}
    best: AuditResult | None = None
    for label, (origin, shift) in pairs.items():
        result = epsilon_lower_bound(statistics(origin + noise_d, origin, shift),
                                     statistics(origin + shift + noise_d_prime, origin, shift),
                                     claimed_delta, 1 - (1 - CONFIDENCE) / len(pairs))
        result = replace(result, test=f"{label}: {result.test}")
        if best is None or result.epsilon_lower_bound > best.epsilon_lower_bound:
            best = result
    assert best is not None
    described = {"mechanism": mechanism, "calibration": calibration, "epsilon_effective": effective,
                 "calibrated_epsilon": parameters.epsilon}
    return report("pathak", described, epsilon, claimed_delta, trials, exact, {}, {}, None, None,
                  {"parties": parties, "dimension": dimension, "records_smallest": PATHAK_RECORDS,
                   "lambda": PATHAK_REGULARIZATION, "data": "breast cancer, first 4 features, rows in the unit ball",
                   "neighbour": f"one record of party 1 replaced and its model retrained (‖Δŵ_1‖ = {model_change:.3g}"
                                f" measured, spec bound {spec / 2**parameters.fractional_bits:.3g}); and a change by"
                                " the spec's full L2 sensitivity evenly over the coordinates"}, broken, best)
