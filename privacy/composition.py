"""One release's guarantee for a data set, and the composition of many (privacy.md; issue 15 item 2).

A `Guarantee` is (ε, δ) for replacing one record of the party's data set (a guarantee for the party unit
implies it), plus, where the mechanism allows, a description from which the accountant rebuilds its exact
privacy-loss distribution. `compose` composes guarantees with dp-accounting's PLDs where it can and by basic
composition otherwise; its ε is never above what basic composition gives.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import asdict, dataclass, field

from privacy.accountant_process import in_accountant

PLD_KINDS = ("binomial", "skellam", "pure", "gaussian")
MAX_PLD_GROUPS = 16  # distinct mechanisms composed exactly; the rest by basic composition
MAX_PLD_FOLDS = 20_000  # elementary mechanisms in one exact composition (its cost grows with them)
DISCRETIZATION = 1e-4


@dataclass(frozen=True)
class Guarantee:
    epsilon: float | None  # None: no finite bound (non-private, or a paper calibration that is not proven DP)
    delta: float
    mechanism: str
    # {"kind": "binomial", "tosses": N, "shifts": s} | {"kind": "skellam", "grid": j, "shifts": s} |
    # {"kind": "pure", "epsilon": e, "count": r} | {"kind": "gaussian", "noise_multiplier": σ/Δ₂}
    pld: dict | None = None
    extra_delta: float = 0.0  # the part of δ outside the PLD (shares' truncation, clamping)

    def __post_init__(self):
        if self.epsilon is not None and not (math.isfinite(self.epsilon) and self.epsilon >= 0):
            raise ValueError("ε must be finite and non-negative, or None for no finite bound")
        if not 0 <= self.extra_delta <= self.delta <= 1:
            raise ValueError("need 0 ≤ extra δ ≤ δ ≤ 1")
        if self.pld is not None and self.pld.get("kind") not in PLD_KINDS:
            raise ValueError(f"unknown PLD kind {self.pld.get('kind')!r}")

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, value: dict) -> "Guarantee":
        return cls(value["epsilon"], float(value["delta"]), str(value["mechanism"]), value.get("pld"),
                   float(value.get("extra_delta", 0.0)))


@dataclass(frozen=True)
class Composed:
    epsilon: float | None  # None: some release has no finite bound
    delta: float
    method: str
    releases: int = 0
    basic_epsilon: float | None = field(default=None)


def _pld(spec: dict, folds: int):
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    kind = spec["kind"]
    if kind == "binomial":
        from privacy import binomial

        return binomial.shifts_pld(int(spec["tosses"]), int(spec["shifts"]) * folds)
    if kind == "skellam":
        from privacy import skellam

        return skellam.shifts_pld(skellam.mu_of(int(spec["grid"])), int(spec["shifts"]) * folds)
    if kind == "pure":
        single = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(float(spec["epsilon"]), 0.0),
                                             value_discretization_interval=DISCRETIZATION)
        return single.self_compose(int(spec["count"]) * folds)
    single = pld.from_gaussian_mechanism(float(spec["noise_multiplier"]), sensitivity=1.0, pessimistic_estimate=True,
                                         value_discretization_interval=DISCRETIZATION)
    return single.self_compose(folds)


def _folds(spec: dict) -> int:
    return int(spec.get("shifts", spec.get("count", 1)))


@in_accountant
def compose(guarantees: list[Guarantee]) -> Composed:
    """(ε, δ) of all the releases together. δ is Σδ_i (as in basic composition); ε is the PLD composition's at
    the δ the PLD parts bring, where that is smaller than their basic sum, plus the others' ε by basic
    composition."""
    if not guarantees:
        return Composed(0.0, 0.0, "nothing spent", 0, 0.0)
    delta = min(1.0, sum(g.delta for g in guarantees))
    if any(g.epsilon is None for g in guarantees):
        return Composed(None, delta, "some release has no finite ε", len(guarantees), None)
    basic = sum(g.epsilon for g in guarantees if g.epsilon is not None)
    groups = Counter(json.dumps(g.pld, sort_keys=True) for g in guarantees if g.pld is not None)
    exact: list[str] = []
    folds = 0
    for key, count in groups.most_common():
        if len(exact) < MAX_PLD_GROUPS and folds + count * _folds(json.loads(key)) <= MAX_PLD_FOLDS:
            exact.append(key)
            folds += count * _folds(json.loads(key))
    exact_set = set(exact)
    in_pld = [g for g in guarantees if g.pld is not None and json.dumps(g.pld, sort_keys=True) in exact_set]
    if not in_pld:
        return Composed(basic, delta, "basic composition", len(guarantees), basic)
    pld_basic = sum(g.epsilon for g in in_pld if g.epsilon is not None)
    pld_delta = max(0.0, sum(g.delta - g.extra_delta for g in in_pld))
    if pld_delta == 0 and all(g.pld is not None and g.pld["kind"] == "pure" for g in in_pld):
        # Pure ε losses at δ = 0: the exact composition is their sum (the largest loss), so the accountant (and
        # the 50 MB of scipy.stats it imports into a party) is not needed.
        return Composed(basic, delta, "basic composition (exact for pure ε at δ = 0)", len(guarantees), basic)
    try:
        combined = None
        for key in exact:
            part = _pld(json.loads(key), groups[key])
            combined = part if combined is None else combined.compose(part)
        assert combined is not None
        pld_epsilon = min(pld_basic, float(combined.get_epsilon_for_delta(pld_delta)))
    except (ValueError, OverflowError, MemoryError):
        return Composed(basic, delta, "basic composition (the exact composition failed)", len(guarantees), basic)
    epsilon = pld_epsilon + (basic - pld_basic)
    method = (f"dp-accounting PLD composition of {len(in_pld)} release(s)"
              + (f", basic composition of {len(guarantees) - len(in_pld)}" if len(in_pld) < len(guarantees) else ""))
    return Composed(epsilon, delta, method, len(guarantees), basic)
