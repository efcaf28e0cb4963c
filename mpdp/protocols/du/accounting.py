"""What a Du run claims (du.md; privacy.md): unit, mechanism, sensitivity, ε per round and composed."""

from __future__ import annotations

import math
from typing import Any

from mpdp.privacy.composition import Guarantee, pure_epsilon
from mpdp.protocols.du import objectives
from mpdp.protocols.du.parameters import PAPER_METHODS, DuParameters

MECHANISMS = {
    "ofpa": "paper calibration, not proven DP: v_ik ~ Lap(4/ε) on w added to the unregularised logistic loss "
            "(Algorithm 2); no minimiser need exist, no Jacobian term, no noise on α",
    "ofaa": "paper calibration, not proven DP: Laplace on every coefficient of the order-2 Taylor objective "
            "(Algorithm 3) with ΔS = 2(J+1)·‖λ_Φj‖_max per order (per-record bounds ½ and ¼: scales 3/ε, 1.5/ε)",
    "objective": "objective perturbation (Chaudhuri et al. 2011, Algorithm 2): λ > 0, b ∝ exp(−ε′‖b‖/2) on "
                 "(w, α), the ε′ correction, the exact minimiser",
    "functional": "functional mechanism (Zhang et al. 2012): Laplace(Δ/ε) on every coefficient of the order-2 "
                  "Taylor objective, Δ = 3 for ‖x‖₁ ≤ 1 with the intercept",
    "none": "none (LR_NoPrivacy)",
}


def per_round_effective(parameters: DuParameters) -> float | None:
    """The ε one round really gives (None: no finite bound). OFAA's two orders together move an L1
    sensitivity of 2·1 (linear) at scale 3/ε and 2·½ (quadratic) at 1.5/ε: ε·(2/3 + 2/3)."""
    method, epsilon = parameters.method, parameters.epsilon
    if method == "ofaa":
        return epsilon * (2 * 1 / objectives.OFAA_SCALES[1] + 2 * 0.5 / objectives.OFAA_SCALES[2])
    if method in ("objective", "functional"):
        return epsilon
    return None


def composed_exactly(epsilon: float, rounds: int, delta: float) -> float:
    """ε of `rounds` ε-DP rounds at δ: their exact composition (mpdp/privacy/composition.py); dp-accounting's PLD
    agrees to its discretisation."""
    return pure_epsilon(epsilon, rounds, delta)


def report(parameters: DuParameters, rounds_run: int) -> dict:
    p = parameters
    claims: dict[str, Any] = {"method": p.method, "mechanism": MECHANISMS[p.method]}
    if not p.private:
        return {**claims, "epsilon": None}
    effective = per_round_effective(p)
    claims.update({
        "unit": "one record of one party (replacement), every round reusing it",
        "epsilon_per_round": p.epsilon,
        "epsilon_per_round_effective": effective,
        "round_limit": p.rounds, "rounds_run": rounds_run,
        "epsilon_composed_basic": p.rounds * (effective if effective is not None else p.epsilon),
        "composition_note": "the stop rule is adaptive, so the round limit R is charged: R·ε",
    })
    if p.method in PAPER_METHODS:
        claims["calibration"] = "paper calibration, not proven DP"
    if effective is not None:
        claims["delta"] = p.delta
        claims["epsilon_composed_exact"] = composed_exactly(effective, p.rounds, p.delta)
    if p.method == "objective":
        claims["sensitivity"] = "‖z‖₂ ≤ 1 (z = x̃/√2), logistic c = ¼; ε′ = ε − log(1 + 2c/(nλ) + c²/(nλ)²)"
    elif p.method == "functional":
        claims["sensitivity"] = f"L1 {objectives.FUNCTIONAL_SENSITIVITY} over all monomial coefficients"
    elif p.method == "ofaa":
        claims["sensitivity"] = "L1 2 (linear) and 1 (quadratic) per record; scales 3/ε and 1.5/ε"
    else:
        claims["sensitivity"] = "undefined: the unregularised minimiser's sensitivity is unbounded"
    return claims


def rounds_for_budget(epsilon_total: float, per_round: float) -> int:
    return max(1, math.floor(epsilon_total / per_round))


# The exact composition's δ is charged only when it saves this share of the basic ε: at few rounds it saves
# almost nothing (5 rounds of ε = 1: 5 − 5e-5) and its δ alone fills a default budget's (docs/privacy-budget.md).
DELTA_WORTH = 0.01


def guarantee(parameters: DuParameters) -> Guarantee:
    """What each party spends on its data in one run (its ledger's entry): the round limit R charged, as the
    report's composition does; no finite ε for `none` and OFPA; pure ε (δ = 0) unless the exact composition at δ
    saves a share DELTA_WORTH of it."""
    p = parameters
    effective = per_round_effective(p) if p.private else None
    if effective is None:
        return Guarantee(None, 0.0, f"du {p.method}: " + ("non-private" if not p.private else "not proven DP"))
    basic = p.rounds * effective
    composed = composed_exactly(effective, p.rounds, p.delta) if p.delta > 0 else basic
    pld = {"kind": "pure", "epsilon": effective, "count": p.rounds}
    proven = p.method not in PAPER_METHODS  # du.md: OFAA is "paper calibration, not proven DP"
    if composed < basic * (1 - DELTA_WORTH):
        return Guarantee(composed, p.delta, f"du {p.method}, {p.rounds} rounds", pld, proven=proven)
    return Guarantee(basic, 0.0, f"du {p.method}, {p.rounds} rounds", pld, proven=proven)
