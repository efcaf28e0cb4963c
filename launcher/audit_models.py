"""`mpdp audit pathak|du`: released model vectors from two neighbouring data sets, many times, with the real
samplers, and the threshold attacks of privacy/audit.py on them.

- Pathak: the release is K·2^F·ŵˢ = Σ_j round(2^F·ŵ_j) + ζ on the integer grid. Only the difference of the sums
  matters, so D's sum is 0 and D′'s is Δ: a change of one party's encoded model by the full L2 sensitivity the
  calibration assumes (2/(nλ) + 2γ/λ + √d·2^−F at n = n_(1)), spread evenly over the d coordinates — the
  worst case for a per-coordinate Laplace calibrated to an L2 bound (L1 = √d·L2). This audits the noise
  mechanism at its own sensitivity bound; the integration tests check that the networked release equals
  this computation with the same noise streams. `distributed`: the K − 1 shares the accounting counts.
- Du: one party's upload after one round of `local_update` (the real objective and noise), from θ = 0, on a
  tiny data set and its neighbour (one record's label flipped, at the largest norm ‖x̃‖₁ = 2 the bounds allow).
"""

from __future__ import annotations

import math
import random
from typing import Callable

import numpy as np

from launcher.progress import progress
from privacy.audit import epsilon_lower_bound

PATHAK_MECHANISMS = ("laplace-paper", "l2-laplace", "gaussian", "distributed")
DU_METHODS = ("functional", "objective", "ofaa", "ofpa")
PATHAK_RECORDS = 100  # n_(1) of the audited setting
PATHAK_REGULARIZATION = 0.01


def _pathak_noise(mechanism: str, calibration: str, epsilon: float, delta: float, parties: int, dimension: int,
                  broken: str | None):
    from pathak.parameters import PathakParameters

    parameters = PathakParameters.for_noise(mechanism, epsilon, delta, PATHAK_REGULARIZATION, calibration, parties,
                                            dimension, n_min=PATHAK_RECORDS)
    perturbation = parameters.noise
    if parameters.distributed:
        shares = parameters.distributed_noise
        assert shares is not None

        def draw(source: random.Random) -> list[int]:
            counted = [shares.sample(source) for _ in range(parties - 1)]  # the K − 1 the accounting counts
            return [sum(column) for column in zip(*counted)]
    else:
        def draw(source: random.Random) -> list[int]:
            return perturbation.sample(PATHAK_RECORDS, source)

    if broken == "no-noise":
        return parameters, (lambda source: [0] * dimension)
    if broken == "coarse-grid":  # the first release's bug: noise on K·ℤ, so the release mod K is noise-free
        return parameters, (lambda source: [parties * round(z / parties) for z in draw(source)])
    return parameters, draw


def audit_pathak(mechanism: str, epsilon: float, delta: float, trials: int, broken: str | None = None,
                 calibration: str = "tight", parties: int = 5, dimension: int = 4, seed: int = 2010) -> dict:
    parameters, draw = _pathak_noise(mechanism, calibration, epsilon, delta, parties, dimension, broken)
    sensitivity = parameters.noise.model_sensitivity(PATHAK_RECORDS) * 2**parameters.fractional_bits
    step = math.floor(sensitivity / math.sqrt(dimension))
    shift = np.array([step - (1 if step % parties == 0 else 0)] * dimension, dtype=float)
    source = random.Random(seed)
    on_d = np.array([draw(source) for _ in range(trials)], dtype=float)
    on_d_prime = np.array([draw(source) for _ in range(trials)], dtype=float) + shift
    direction = shift / np.linalg.norm(shift)

    def statistics(releases: np.ndarray) -> dict[str, np.ndarray]:
        return {
            "projection on Δ": releases @ direction,
            "L1 likelihood ratio": np.abs(releases - shift).sum(axis=1) - np.abs(releases).sum(axis=1),
            "L2 distance ratio": np.linalg.norm(releases - shift, axis=1) - np.linalg.norm(releases, axis=1),
            f"coordinate 1 mod {parties}": np.mod(releases[:, 0], parties),
        }

    if mechanism == "distributed":
        charged = parameters.guarantee()
        effective, claimed_delta = charged.epsilon, charged.delta
    else:
        effective = parameters.noise.effective_epsilon(PATHAK_RECORDS)
        claimed_delta = parameters.noise.report()["delta"]
    result = epsilon_lower_bound(statistics(on_d), statistics(on_d_prime), claimed_delta)
    noise = {"mechanism": mechanism, "calibration": calibration, "epsilon_effective": effective}
    if broken:
        noise["broken"] = broken
    return {"protocol": "pathak", "noise": noise, "claimed_epsilon": epsilon, "delta": claimed_delta,
            "trials_per_data_set": trials, "confidence": 0.95, **result.to_dict(),
            "exceeds_claim": result.epsilon_lower_bound > epsilon,
            "setting": {"parties": parties, "dimension": dimension, "records_smallest": PATHAK_RECORDS,
                        "lambda": PATHAK_REGULARIZATION,
                        "neighbour": "one party's encoded model moved by the full L2 sensitivity, evenly over the "
                                     "coordinates (the L1-worst direction)"}}


def _du_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Four records in one dimension; the neighbour flips the label of the first, x = 1 (‖x̃‖₁ = 2)."""
    features = np.array([[1.0], [0.5], [-0.5], [-1.0]])
    labels = np.array([0, 1, 0, 1])
    neighbour = labels.copy()
    neighbour[0] = 1
    return features, labels, neighbour


def audit_du(method: str, epsilon: float, delta: float, trials: int, broken: str | None = None,
             seed: int = 2012) -> dict:
    from du import accounting, objectives
    from du.local import local_update
    from du.parameters import DuParameters

    if broken is not None:
        raise ValueError("--broken is for the noise-share and Pathak audits")
    parameters = DuParameters(method=method, epsilon=epsilon, delta=delta, rounds=1, tolerance=0.0, local_epochs=5,
                              learning_rate=1.0, regularization=0.01, parties=2, dimension=1, bound=50.0,
                              secure_aggregation=False, honest_fraction=1.0, key_id=b"\0" * 32)
    features, labels, neighbour = _du_data()
    augmented = objectives.augment(features)
    source = random.Random(seed)
    theta = np.zeros(parameters.weights)

    def release(y: np.ndarray) -> np.ndarray:
        return np.array([local_update(parameters, augmented, y, theta, source) for _ in range(trials)])

    on_d, on_d_prime = release(labels), release(neighbour)

    def statistics(releases: np.ndarray) -> dict[str, np.ndarray]:
        return {"w": releases[:, 0], "α": releases[:, 1], "w + α": releases.sum(axis=1),
                "w − α": releases[:, 0] - releases[:, 1]}

    result = epsilon_lower_bound(statistics(on_d), statistics(on_d_prime), 0.0)
    effective = accounting.per_round_effective(parameters)
    return {"protocol": "du", "noise": {"mechanism": method, "epsilon_effective": effective},
            "claimed_epsilon": epsilon, "delta": 0.0, "trials_per_data_set": trials, "confidence": 0.95,
            **result.to_dict(), "exceeds_claim": result.epsilon_lower_bound > epsilon,
            "setting": {"records": len(labels), "dimension": 1, "rounds": 1,
                        "neighbour": "one record's label flipped (x = 1, ‖x̃‖₁ = 2): one party's upload after one "
                                     "round from θ = 0"}}


AUDITS: dict[str, tuple[tuple[str, ...], Callable[..., dict]]] = {
    "pathak": (PATHAK_MECHANISMS, audit_pathak),
    "du": (DU_METHODS, audit_du),
}


def run(protocol: str, mechanism: str, epsilon: float, delta: float, trials: int, broken: str | None) -> dict:
    mechanisms, audit = AUDITS[protocol]
    if mechanism not in mechanisms:
        raise ValueError(f"{protocol}'s audit takes --noise {' | '.join(mechanisms)}, not {mechanism!r}")
    progress(f"auditing {protocol} ({mechanism}{', broken: ' + broken if broken else ''}): {trials} releases per "
             "data set")
    return audit(mechanism, epsilon, delta, trials, broken=broken)
