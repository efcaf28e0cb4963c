"""`mpdp audit` of shared vote-count noise (each protocol's audit: launcher/protocols/*/audit.py): an exact check,
then an empirical bound.

1. Exact check (mpdp/privacy/exact_audit.py): the accountant applied to the noise the sampler really draws with —
   the tosses N_i or Skellam μ_i of the `ShareSampler` the releases are drawn from, checked against its own
   draws — summed over the contributors counted, at the sensitivity of the spec (mpdp/privacy/spec_sensitivity.py)
   or the one measured on the neighbouring data sets, whichever is larger, against the claimed (ε, δ). The
   contributors counted are those of the worst decryptable sum's transcript that the adversary does not host,
   counted here (`WorstSum`), not taken from the collusion arithmetic the calibration uses.
2. Empirical bound (mpdp/privacy/audit.py): the releases run many times on two neighbouring data sets with the real
   noise samplers (the in-process reference computation: the networked release equals it exactly, as the
   integration tests check), threshold attacks and the histogram estimator, and the Clopper–Pearson 95 % lower
   bound on ε with its resolution.

A claim fails when the exact ε exceeds it or the empirical lower bound does; the command then exits 1.

- DPPP: one query, two classes; the neighbour replaces one record of teacher 1 so that its retrained vote
  moves (launcher/audit/neighbours.py). Exactly ⌈τK⌉ teachers contribute (the fewest the key holders decrypt:
  the worst case), c of them the malicious principal's (`WorstSum`).
- Hamm with noisy counts (binary): the neighbour replaces party 1's data (its labels flipped, retrained), moving
  its votes on the N public points.

`--broken` audits a deliberately broken mechanism the same way (BROKEN says what each does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from mpdp.privacy.audit import AuditResult, epsilon_lower_bound, histogram_statistic, hockey_stick, resolution
from mpdp.privacy.binomial import BinomialCalibration, minimal_tosses_for_shifts, sample_binomial
from mpdp.privacy.collusion import COLLUDING_CONTRIBUTORS, calibrated_contributors, check_colluding
from mpdp.privacy.exact_audit import (
    ExactCheck,
    binomial_log_pmf,
    lattice_epsilon,
    moments_agree,
    skellam_log_pmf,
)
from mpdp.privacy.skellam import SkellamCalibration, minimal_grid, sample_shares
from mpdp.threshold_sum.decryption import MIN_CONTRIBUTORS

BROKEN = {
    "no-noise": "no noise at all",
    "coarse-grid": "every share multiplied by K, as a fixed-point release once did: the sum's residue mod K is then "
                   "a function of the data",
    "quarter-tosses": "each contributor draws a quarter of its Binomial tosses (Skellam: a quarter of its μ)",
    "claim-mismatch": "noise calibrated to 4ε, claimed as ε",
    "half-sensitivity": "noise calibrated to half the sensitivity (vote counts: half the shifted counts; a model: "
                        "half of 2/(nλ) + 2γ/λ + √d·2^−F)",
}
HONEST_FRACTION = 2 / 3
CONFIDENCE = 0.95
MISMATCH_FACTOR = 4.0  # claim-mismatch: calibrated to this many times the claimed ε


@dataclass(frozen=True)
class ShareSampler:
    """A contributor's noise shares as drawn: `draw` uses exactly these fields, and the exact check reads them."""

    mechanism: str  # binomial | skellam
    tosses: int = 0  # Binomial N_i: a share is Bin(N_i, ½) − N_i/2
    mu: float = 0.0  # Skellam μ_i: a share is Sk(μ_i), redrawn outside [−bound, bound]
    bound: int = 0
    multiplier: int = 1  # shares on multiplier·ℤ (coarse-grid)
    silent: bool = False  # no noise (no-noise)

    def draw(self, count: int) -> np.ndarray:
        if self.silent:
            return np.zeros(count, dtype=np.int64)
        if self.mechanism == "binomial":
            values = np.array(sample_binomial(self.tosses, count), dtype=np.int64) - self.tosses // 2
        else:
            values = np.array(sample_shares(self.mu, self.bound, count), dtype=np.int64)
        return self.multiplier * values

    def moments(self) -> tuple[float, float]:
        """(variance, excess kurtosis) of one share as declared."""
        if self.silent:
            return 0.0, 0.0
        if self.mechanism == "binomial":
            return self.multiplier**2 * self.tosses / 4, -2 / self.tosses
        return self.multiplier**2 * self.mu, 1 / self.mu

    def sum_noise(self, contributors: int) -> tuple[Callable[[np.ndarray], np.ndarray], float]:
        """ln pmf and standard deviation of the sum of `contributors` shares, in lattice units (÷ multiplier)."""
        if self.silent:
            return (lambda k: np.where(k == 0, 0.0, -np.inf)), 0.0
        if self.mechanism == "binomial":
            total = contributors * self.tosses
            return binomial_log_pmf(total), math.sqrt(total) / 2
        return skellam_log_pmf(contributors * self.mu), math.sqrt(contributors * self.mu)

    def truncation_distance(self, draws: int) -> float:
        """Total variation between the truncated and the exact sum (Skellam: 2·P(Pois(μ_i/2) > B) per draw)."""
        if self.mechanism != "skellam" or self.silent:
            return 0.0
        from scipy.special import pdtrc

        return draws * 2 * float(pdtrc(self.bound, self.mu / 2))

    def describe(self) -> dict:
        described: dict = {"mechanism": self.mechanism}
        if self.mechanism == "binomial":
            described["tosses_per_contributor"] = self.tosses
        else:
            described.update({"mu_per_contributor": self.mu, "truncation_bound": self.bound})
        if self.multiplier != 1:
            described["multiplier"] = self.multiplier
        if self.silent:
            described["silent"] = True
        return described


def share_sampler(noise: str, epsilon: float, delta: float, shifts: int, contributors_expected: int, values: int,
                  broken: str | None, multiplier: int, split_among_calibrated: bool = False,
                  colluding: int = COLLUDING_CONTRIBUTORS) -> tuple[ShareSampler, dict]:
    """The sampler a contributor draws with, and the calibration it claims. `broken` plants one of BROKEN."""
    calibrate_epsilon = epsilon * (MISMATCH_FACTOR if broken == "claim-mismatch" else 1)
    calibrate_shifts = max(1, shifts // 2) if broken == "half-sensitivity" else shifts
    if noise == "skellam":
        calibration = SkellamCalibration(calibrate_epsilon, delta, 1, calibrate_shifts, contributors_expected,
                                         HONEST_FRACTION, values, minimal_grid(calibrate_epsilon, delta,
                                                                               calibrate_shifts), colluding)
        mu = calibration.share_mu / (4 if broken == "quarter-tosses" else 1)
        sampler = ShareSampler("skellam", mu=mu, bound=calibration.bound)
        claim = {"mu": calibration.mu, "mu_per_contributor": calibration.share_mu}
    else:
        total = minimal_tosses_for_shifts(calibrate_epsilon, delta, calibrate_shifts)
        per = BinomialCalibration(calibrate_epsilon, delta, 1, contributors_expected, HONEST_FRACTION,
                                  total, colluding).tosses_per_teacher
        if split_among_calibrated:  # N_i from the protocol's own N over the calibrated contributors (one party
            # moves `shifts` counts), not from a teacher's share of the calibration
            per = -(-total // calibrated_contributors(math.ceil(HONEST_FRACTION * contributors_expected - 1e-9),
                                                      colluding))
            per += per % 2
        claim = {"total_tosses": total, "tosses_per_contributor": per}
        if broken == "quarter-tosses":
            per = max(2, per // 4 - (per // 4) % 2)
        sampler = ShareSampler("binomial", tosses=per)
    if broken == "no-noise":
        sampler = ShareSampler(sampler.mechanism, sampler.tosses, sampler.mu, sampler.bound, silent=True)
    elif broken == "coarse-grid":
        sampler = ShareSampler(sampler.mechanism, sampler.tosses, sampler.mu, sampler.bound, multiplier=multiplier)
    return sampler, {"mechanism": noise, "calibrated_epsilon": calibrate_epsilon,
                     "calibrated_shifts": calibrate_shifts, **claim}


def _releases(votes: np.ndarray, sampler: ShareSampler, contributors: int, trials: int) -> tuple[np.ndarray,
                                                                                                   np.ndarray]:
    """trials × coordinates: Σ votes + Σ of `contributors` shares per coordinate; and every share drawn."""
    coordinates = votes.shape[1]
    shares = np.stack([sampler.draw(trials * coordinates).reshape(trials, coordinates) for _ in range(contributors)])
    return votes.sum(axis=0) + shares.sum(axis=0), shares.ravel()


def exact_check(sampler: ShareSampler, contributors: int, spec_shifts: list[int], measured_shifts: list[int],
                epsilon: float, delta: float, draws: np.ndarray, share_draws: int) -> ExactCheck:
    """The exact check of a noisy count release: PLD of the sum of the counted contributors' shares."""
    spec_l1, measured_l1 = sum(abs(s) for s in spec_shifts), sum(abs(s) for s in measured_shifts)
    used = measured_shifts if measured_l1 > spec_l1 else spec_shifts
    log_pmf, std = sampler.sum_noise(contributors)
    truncation = (1 + math.exp(epsilon)) * sampler.truncation_distance(share_draws)
    variance, kurtosis = sampler.moments()
    value = lattice_epsilon(log_pmf, std, sampler.multiplier, used, max(delta - truncation, 1e-300))
    return ExactCheck(value, epsilon, delta,
                      "dp-accounting PLD (pessimistic, 1e-4 discretisation) of the sum of the counted contributors' "
                      "shares against its shift by the neighbour, composed over the moved counts"
                      + ("; the shares' truncation to [−B, B] counted in δ" if truncation else ""),
                      {**sampler.describe(), "contributors_counted": contributors},
                      {"spec_shifts": spec_shifts, "measured_shifts": measured_shifts, "used": used,
                       "spec_exceeded": measured_l1 > spec_l1},
                      moments_agree(draws, 0.0, variance, kurtosis),
                      tolerance=1e-4 * len([s for s in used if s]) + 1e-9)


@dataclass(frozen=True)
class WorstSum:
    """The decryptable sum the audit releases, as its transcript would show it: who contributed, and which of them
    the malicious principal hosts. The count of noise shares the exact check sums is read off this, not asked of
    the calibration it audits (a calibration that divides N among the wrong number of shares is then seen)."""

    senders: tuple[int, ...]  # contributors whose ballots the sum holds; sender 1 holds the neighbouring record
    hosted: frozenset[int]  # those the malicious principal runs: it knows their votes and shares and subtracts them

    @classmethod
    def fewest(cls, contributors_expected: int, colluding: int) -> "WorstSum":
        """The aggregator's worst case: the fewest contributions a key holder decrypts a sum of (⌈τK⌉, never fewer
        than MIN_CONTRIBUTORS: mpdp/threshold_sum/decryption.py), the principal's c among them, the victim not."""
        check_colluding(math.ceil(HONEST_FRACTION * contributors_expected - 1e-9), colluding)
        size = max(MIN_CONTRIBUTORS, math.ceil(HONEST_FRACTION * contributors_expected - 1e-9))
        senders = tuple(range(1, size + 1))
        return cls(senders, frozenset(senders[size - colluding:]))

    @property
    def unknown(self) -> int:
        """Shares in the sum that neither the aggregator nor the principal knows: what the adversary's view of the
        release (the sum less everything it hosts) carries as noise."""
        return sum(sender not in self.hosted for sender in self.senders)

    def why(self, contributors_expected: int) -> str:
        whose = ("one malicious party's share" if len(self.hosted) == 1 else
                 f"one malicious owner's {len(self.hosted)} shares ({len(self.hosted)} per data owner)")
        return f"a decryptable sum holds {len(self.senders)} of {contributors_expected}, less {whose}"


def report(protocol: str, noise: dict, epsilon: float, delta: float, trials: int, exact: ExactCheck,
           on_d: dict, on_d_prime: dict, integers_d: np.ndarray | None, integers_d_prime: np.ndarray | None,
           setting: dict, broken: str | None, result: AuditResult | None = None) -> dict:
    """Both checks and the verdict. `integers_*`: a low-dimensional integer view of the releases for the histogram
    estimator (None where the releases are not integers)."""
    extra: dict = {}
    if result is None:
        if integers_d is not None and integers_d_prime is not None:
            ratio_d, ratio_d_prime = histogram_statistic(integers_d, integers_d_prime)
            on_d = {**on_d, "histogram likelihood ratio": ratio_d}
            on_d_prime = {**on_d_prime, "histogram likelihood ratio": ratio_d_prime}
            extra["hockey_stick_delta_at_claim"] = hockey_stick(integers_d, integers_d_prime, epsilon)
        result = epsilon_lower_bound(on_d, on_d_prime, delta, CONFIDENCE)
    empirical_exceeds = result.epsilon_lower_bound > epsilon
    resolved = resolution(result, epsilon, delta)
    if broken:
        noise = {**noise, "broken": broken}
    return {"protocol": protocol, "setting": setting, "noise": noise, "claimed_epsilon": epsilon, "delta": delta,
            "trials_per_data_set": trials, "confidence": CONFIDENCE, "exact": exact.to_dict(),
            **result.to_dict(),
            "resolution_epsilon": resolved if math.isfinite(resolved) else None,  # None: no event could show it
            **extra, "empirical_exceeds_claim": empirical_exceeds,
            "exceeds_claim": exact.exceeds_claim or empirical_exceeds}


def _number(value: float | None) -> str:
    return "∞ (no finite ε)" if value is None or math.isinf(value) else f"{value:.3g}"


def summary(report: dict) -> str:
    verdict = ("EXCEEDS the claim: the mechanism is not as private as claimed" if report["exceeds_claim"]
               else "within the claim (exact check); the empirical attack found no violation")
    broken = f", deliberately broken: {report['noise']['broken']}" if "broken" in report["noise"] else ""
    effective = report["noise"].get("epsilon_effective", "absent")
    delivered = ("" if effective == "absent" else "; no finite ε is proven for it" if effective is None
                 else f"; the ε its calibration says it gives is {effective:.3g}")
    exact = report["exact"]
    exact_verdict = "EXCEEDS" if exact["exceeds_claim"] else "within"
    draws = "" if exact["draws_agree"] else "; the sampler's draws DO NOT MATCH the parameters it declares"
    claimed = report["claimed_epsilon"]
    bound, resolved = report["epsilon_lower_bound"], report["resolution_epsilon"]
    trials = report["trials_per_data_set"]
    empirical = ("EXCEEDS" if report["empirical_exceeds_claim"] else
                 f"inconclusive below ε ≈ {resolved:.3g} at {trials} trials (on events of rate ≥ 1/{trials}; a loss "
                 "on rarer events, where (ε, δ) noise has its worst, is not seen)" if resolved is not None else
                 f"inconclusive: on the strongest event found, {trials} trials cannot show any ε above the claim")
    return "\n".join([
        f"audit of {report['protocol']} ({report['noise']['mechanism']}{broken}), "
        f"{report['trials_per_data_set']} releases per data set",
        f"  neighbours: {report['setting']['neighbour']}",
        *([f"  privacy: the noise of {report['setting']['contributors']} contributors counted: "
           f"{report['setting']['contributors_counted_because']}"] if "contributors_counted_because"
          in report["setting"] else []),
        f"  claimed ε = {claimed:g} (δ = {report['delta']:.3g}){delivered}",
        f"  exact check: the sampled noise gives ε = {_number(exact['epsilon'])} at the sensitivity "
        f"{_sensitivity(exact['sensitivity'])} — {exact_verdict}{draws}",
        f"  empirical: 95 % lower bound ε ≥ {bound:.3f} — {empirical}",
        *([] if "wire_sample" not in report else [
            f"  over the wire: {report['wire_sample']['sessions']} sessions by real processes "
            + ("equal the reference computation" if report["wire_sample"]["matches"] else "DIFFER from the reference")
            + f" (max |Δ| {report['wire_sample']['max_abs_difference']:.2e})"]),
        f"  strongest test: {report['test']} (threshold {report['threshold']:g}; rates {report['rate_d']:.4f} on D, "
        f"{report['rate_d_prime']:.4f} on D′, on the {report['trials']} evaluation releases)",
        f"  verdict: {verdict}",
    ])


def _sensitivity(sensitivity: dict) -> str:
    if "used_l2" in sensitivity:
        return (f"L2 {sensitivity['used_l2']:.4g} grid units (spec {sensitivity['spec_l2']:.4g}, measured on the "
                f"neighbours {sensitivity['measured_l2']:.4g})")
    if "used" in sensitivity and isinstance(sensitivity["used"], list):
        moved = [s for s in sensitivity["used"] if s]
        return f"{len(moved)} counts moved by ±{max(abs(s) for s in moved)}" if moved else "0"
    stated = ", ".join(f"{k.replace('_', ' ')} {v:.4g}" for k, v in sensitivity.items()
                       if isinstance(v, float) and not isinstance(v, bool))
    return stated or "of the spec"
