"""`mpdp audit dppp|hamm` (Pathak and Du: launcher/audit_models.py): the protocols' releases run many times on two neighbouring data sets with the real
noise samplers (the in-process reference computation: the networked release equals it exactly, as the
integration tests check), a distinguishing attack on them, and the Clopper–Pearson 95 % lower bound on ε
beside the claimed ε (privacy/audit.py). A lower bound above the claim fails the command.

- DPPP: one query, two classes; the neighbour replaces one record of teacher 1 so that its vote moves from
  class 0 to class 1. Exactly ⌈τK⌉ teachers contribute (the fewest the calibration allows: the worst case).
- Hamm with noisy counts (binary): the neighbour replaces party 1's data, moving all N of its votes.

`--broken` audits a deliberately broken mechanism the same way: `no-noise`, or `coarse-grid` (every share
multiplied by K, as Pathak's first release did: the sum's residue mod K is then a function of the data).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from launcher.progress import progress
from privacy.audit import epsilon_lower_bound
from privacy.binomial import BinomialCalibration, minimal_tosses_for_shifts, sample_binomial
from privacy.skellam import SkellamCalibration, minimal_grid, sample_shares

BROKEN = ("no-noise", "coarse-grid")
HONEST_FRACTION = 2 / 3


@dataclass
class Shares:
    """A contributor's noise shares for one mechanism: `draw(count)` centred values, and what the claim is."""

    draw: Callable[[int], np.ndarray]
    description: dict


def _shares(noise: str, epsilon: float, delta: float, shifts: int, contributors_expected: int, values: int,
            broken: str | None, multiplier: int) -> Shares:
    if noise == "skellam":
        calibration = SkellamCalibration(epsilon, delta, 1, shifts, contributors_expected, HONEST_FRACTION, values,
                                         minimal_grid(epsilon, delta, shifts))
        mu, bound = calibration.share_mu, calibration.bound

        def draw(count: int) -> np.ndarray:
            return np.array(sample_shares(mu, bound, count), dtype=np.int64)

        description = {"mechanism": "skellam", "mu": calibration.mu, "mu_per_contributor": mu}
    else:
        total = minimal_tosses_for_shifts(epsilon, delta, shifts)
        per = BinomialCalibration(epsilon, delta, 1, contributors_expected, HONEST_FRACTION, total).tosses_per_teacher
        if shifts != 2:  # Hamm: N_i from its own N (one party moves `shifts` counts)
            per = -(-total // math.ceil(HONEST_FRACTION * contributors_expected - 1e-9))
            per += per % 2

        def draw(count: int) -> np.ndarray:
            return np.array(sample_binomial(per, count), dtype=np.int64) - per // 2

        description = {"mechanism": "binomial", "total_tosses": total, "tosses_per_contributor": per}
    if broken == "no-noise":
        return Shares(lambda count: np.zeros(count, dtype=np.int64), {**description, "broken": broken})
    if broken == "coarse-grid":
        return Shares(lambda count: multiplier * draw(count), {**description, "broken": broken,
                                                               "multiplier": multiplier})
    return Shares(draw, description)


def _releases(votes: np.ndarray, shares: Shares, contributors: int, trials: int) -> np.ndarray:
    """trials × coordinates: Σ votes + Σ of `contributors` shares per coordinate."""
    coordinates = votes.shape[1]
    noise = sum(shares.draw(trials * coordinates).reshape(trials, coordinates) for _ in range(contributors))
    return votes.sum(axis=0) + noise


def audit_dppp(noise: str, epsilon: float, delta: float, trials: int, teachers: int = 10,
               broken: str | None = None) -> dict:
    contributors = math.ceil(HONEST_FRACTION * teachers - 1e-9)
    shares = _shares(noise, epsilon, delta, 2, teachers, 2, broken, teachers)
    others = np.array([[1, 0] if j % 2 else [0, 1] for j in range(2, contributors + 1)]).reshape(-1, 2)
    on_d = _releases(np.vstack([[1, 0], others]), shares, contributors, trials)
    on_d_prime = _releases(np.vstack([[0, 1], others]), shares, contributors, trials)

    def statistics(releases: np.ndarray) -> dict[str, np.ndarray]:
        difference = releases[:, 0] - releases[:, 1]
        return {"count difference": difference, f"difference mod {teachers}": np.mod(difference, teachers)}

    return _report("dppp", shares, epsilon, delta, trials, statistics(on_d), statistics(on_d_prime),
                   {"teachers": teachers, "contributors": contributors, "queries": 1, "classes": 2,
                    "neighbour": "one record of teacher 1 replaced: its vote moves from class 0 to class 1"})


def audit_hamm(noise: str, epsilon: float, delta: float, trials: int, parties: int = 20, points: int = 10,
               broken: str | None = None) -> dict:
    contributors = math.ceil(HONEST_FRACTION * parties - 1e-9)
    shares = _shares(noise, epsilon, delta, points, parties, points, broken, parties)
    rng = np.random.default_rng(7)  # the other parties' fixed votes (public in the audit)
    others = rng.integers(0, 2, size=(contributors - 1, points))
    on_d = _releases(np.vstack([np.ones(points, dtype=int), others]), shares, contributors, trials)
    on_d_prime = _releases(np.vstack([np.zeros(points, dtype=int), others]), shares, contributors, trials)

    def statistics(releases: np.ndarray) -> dict[str, np.ndarray]:
        total = releases.sum(axis=1)
        return {"sum of counts": total, f"sum mod {parties}": np.mod(total, parties)}

    return _report("hamm", shares, epsilon, delta, trials, statistics(on_d), statistics(on_d_prime),
                   {"parties": parties, "contributors": contributors, "aux_points": points, "classes": 2,
                    "neighbour": "party 1's data replaced: all its N votes move from 1 to 0"})


def _report(protocol: str, shares: Shares, epsilon: float, delta: float, trials: int, on_d: dict, on_d_prime: dict,
            setting: dict) -> dict:
    result = epsilon_lower_bound(on_d, on_d_prime, delta)
    return {"protocol": protocol, "setting": setting, "noise": shares.description, "claimed_epsilon": epsilon,
            "delta": delta, "trials_per_data_set": trials, "confidence": 0.95, **result.to_dict(),
            "exceeds_claim": result.epsilon_lower_bound > epsilon}


AUDITS: dict[str, Callable[..., dict]] = {"dppp": audit_dppp, "hamm": audit_hamm}


PROTOCOLS = ("dppp", "hamm", "pathak", "du")
DEFAULT_NOISE = {"dppp": "binomial", "hamm": "binomial", "pathak": "laplace-paper", "du": "functional"}


def run(protocol: str, noise: str | None, epsilon: float, delta: float, trials: int, broken: str | None) -> dict:
    if protocol not in PROTOCOLS:
        raise ValueError(f"audits exist for {', '.join(PROTOCOLS)}")
    if trials < 100:
        raise ValueError("--trials must be at least 100")
    if broken is not None and broken not in BROKEN:
        raise ValueError(f"--broken must be one of {', '.join(BROKEN)}")
    noise = noise or DEFAULT_NOISE[protocol]
    started = time.perf_counter()
    if protocol in AUDITS:
        if noise not in ("binomial", "skellam"):
            raise ValueError(f"{protocol}'s audit takes --noise binomial | skellam, not {noise!r}")
        progress(f"auditing {protocol} ({noise}{', broken: ' + broken if broken else ''}): {trials} releases per "
                 "data set")
        report = AUDITS[protocol](noise, epsilon, delta, trials, broken=broken)
    else:
        from launcher import audit_models

        report = audit_models.run(protocol, noise, epsilon, delta, trials, broken)
    report["seconds"] = time.perf_counter() - started
    return report


def summary(report: dict) -> str:
    verdict = ("EXCEEDS the claim: the mechanism is not as private as claimed" if report["exceeds_claim"]
               else "within the claim")
    broken = f", deliberately broken: {report['noise']['broken']}" if "broken" in report["noise"] else ""
    effective = report["noise"].get("epsilon_effective", "absent")
    delivered = ("" if effective == "absent" else "; no finite ε is proven for it" if effective is None
                 else f"; the ε it really gives is {effective:.3g}")
    return "\n".join([
        f"audit of {report['protocol']} ({report['noise']['mechanism']}{broken}), "
        f"{report['trials_per_data_set']} releases per data set",
        f"  neighbours: {report['setting']['neighbour']}",
        f"  claimed ε = {report['claimed_epsilon']:g} (δ = {report['delta']:.3g}){delivered}; 95 % lower bound ε ≥ "
        f"{report['epsilon_lower_bound']:.3f} — {verdict}",
        *([] if "wire_sample" not in report else [
            f"  over the wire: {report['wire_sample']['sessions']} sessions by real processes "
            + ("equal the reference computation" if report["wire_sample"]["matches"] else "DIFFER from the reference")
            + f" (max |Δ| {report['wire_sample']['max_abs_difference']:.2e})"]),
        f"  strongest test: {report['test']} (threshold {report['threshold']:g}; rates {report['rate_d']:.4f} on D, "
        f"{report['rate_d_prime']:.4f} on D′, on the {report['trials']} evaluation releases)",
    ])
