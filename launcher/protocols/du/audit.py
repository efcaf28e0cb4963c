"""`mpdp audit du`: the exact check of the noise Du's upload really samples, then uploads from two neighbouring
data sets, many times, with the real sampler, and the attacks of mpdp/privacy/audit.py on them.

one party's upload after one round of `local_update` (the real objective and noise), from θ = 0, on a
  tiny data set and its neighbour (one record's label flipped, at the largest norm ‖x̃‖₁ = 2 the bounds allow).
  The exact check reads the scales `local_update` draws with (mpdp/protocols/du/local.py `noise_scales`).
"""

from __future__ import annotations

import math
import random

import numpy as np

from launcher.audit.counts import MISMATCH_FACTOR, report
from mpdp.privacy import spec_sensitivity
from mpdp.privacy.exact_audit import ExactCheck, laplace_epsilon

DU_BROKEN = ("claim-mismatch",)


def _du_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Four records in one dimension; the neighbour flips the label of the first, x = 1 (‖x̃‖₁ = 2)."""
    features = np.array([[1.0], [0.5], [-0.5], [-1.0]])
    labels = np.array([0, 1, 0, 1])
    neighbour = labels.copy()
    neighbour[0] = 1
    return features, labels, neighbour


def du_exact(parameters, augmented: np.ndarray, labels: np.ndarray, neighbour: np.ndarray,
             epsilon: float) -> ExactCheck:
    """Du's exact check: the scales `local_update` draws with, the spec's sensitivity and the one measured on the
    neighbours (the Taylor coefficients' L1 change; the rows' norm for objective perturbation)."""
    from mpdp.protocols.du import objectives
    from mpdp.protocols.du.local import noise_scales

    scales = noise_scales(parameters, len(labels))
    method = parameters.method
    sensitivity: dict = {}
    if method in ("functional", "ofaa"):
        spec_linear, spec_quadratic = spec_sensitivity.du_taylor_l1()
        exact_d, exact_d_prime = objectives.taylor(augmented, labels), objectives.taylor(augmented, neighbour)
        upper = np.triu_indices(len(exact_d.b))
        doubled = np.where(upper[0] == upper[1], 1.0, 2.0)
        measured_linear = float(np.abs(exact_d.b - exact_d_prime.b).sum())
        measured_quadratic = float(np.abs(doubled * (exact_d.A - exact_d_prime.A)[upper]).sum())
        linear, quadratic = max(spec_linear, measured_linear), max(spec_quadratic, measured_quadratic)
        value = laplace_epsilon(linear, scales["linear"]) + laplace_epsilon(quadratic, scales["quadratic"])
        accountant = "pure ε = Δ_linear/b_linear + Δ_quadratic/b_quadratic (Laplace on every coefficient)"
        sensitivity = {"spec_linear_l1": spec_linear, "spec_quadratic_l1": spec_quadratic,
                       "measured_linear_l1": measured_linear, "measured_quadratic_l1": measured_quadratic,
                       "spec_exceeded": measured_linear > spec_linear or measured_quadratic > spec_quadratic}
    elif method == "objective":
        radius = float(np.linalg.norm(augmented, axis=1).max() / math.sqrt(2))  # ‖z‖₂, z = x̃/√2
        value = spec_sensitivity.du_objective_epsilon(scales["norm"] / max(radius, 1.0), len(labels),
                                                      parameters.regularization + scales["extra_regularization"])
        accountant = "Chaudhuri et al. 2011 Thm 9: 2/s + ln(1 + 2c/(nλ) + (c/(nλ))²)"
        sensitivity = {"measured_largest_z_norm": radius, "spec_z_norm": 1.0, "spec_exceeded": radius > 1 + 1e-12}
    else:  # ofpa: α carries no noise, and a label flip moves it
        value = laplace_epsilon(0.0, scales["w"]) if scales["α"] > 0 else math.inf
        accountant = "the intercept α carries no noise and moves with one record's label: no finite ε"
    return ExactCheck(value, epsilon, 0.0, accountant, {"mechanism": method, "scales": scales}, sensitivity, True,
                      1e-9)


def audit_du(method: str, epsilon: float, delta: float, trials: int, broken: str | None = None,
             seed: int = 2012) -> dict:
    from mpdp.protocols.du import accounting, objectives
    from mpdp.protocols.du.local import local_update
    from mpdp.protocols.du.parameters import DuParameters

    if broken is not None and broken not in DU_BROKEN:
        raise ValueError(f"Du's audit plants {', '.join(DU_BROKEN)}, not {broken!r}")
    calibrate_epsilon = epsilon * (MISMATCH_FACTOR if broken == "claim-mismatch" else 1)
    parameters = DuParameters(method=method, epsilon=calibrate_epsilon, delta=delta, rounds=1, tolerance=0.0,
                              local_epochs=5, learning_rate=1.0, regularization=0.01, parties=2, dimension=1,
                              bound=50.0, secure_aggregation=False, honest_fraction=1.0, key_id=b"\0" * 32)
    features, labels, neighbour = _du_data()
    augmented = objectives.augment(features)
    exact = du_exact(parameters, augmented, labels, neighbour, epsilon)
    source = random.Random(seed)
    theta = np.zeros(parameters.weights)

    def release(y: np.ndarray) -> np.ndarray:
        return np.array([local_update(parameters, augmented, y, theta, source) for _ in range(trials)])

    on_d, on_d_prime = release(labels), release(neighbour)

    def statistics(releases: np.ndarray) -> dict[str, np.ndarray]:
        return {"w": releases[:, 0], "α": releases[:, 1], "w + α": releases.sum(axis=1),
                "w − α": releases[:, 0] - releases[:, 1]}

    effective = accounting.per_round_effective(parameters)
    return report("du", {"mechanism": method, "epsilon_effective": effective,
                         "calibrated_epsilon": calibrate_epsilon},
                  epsilon, 0.0, trials, exact, statistics(on_d), statistics(on_d_prime), None, None,
                  {"records": len(labels), "dimension": 1, "rounds": 1,
                   "neighbour": "one record's label flipped (x = 1, ‖x̃‖₁ = 2): one party's upload after one "
                                "round from θ = 0"}, broken)
