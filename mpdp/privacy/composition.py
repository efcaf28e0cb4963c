"""One release's guarantee for a data set, and the composition of many (privacy.md).

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

from mpdp.privacy.accountant_process import in_accountant

PLD_KINDS = ("binomial", "skellam", "pure", "gaussian", "skellam-rdp")
MAX_PLD_GROUPS = 16  # distinct mechanisms composed exactly; the rest by basic composition
MAX_PLD_FOLDS = 20_000  # elementary mechanisms in one exact composition (its cost grows with them)
DISCRETIZATION = 1e-4


@dataclass(frozen=True)
class Guarantee:
    epsilon: float | None  # None: no finite bound (non-private, or a paper calibration that is not proven DP)
    delta: float
    mechanism: str
    # {"kind": "binomial", "tosses": N, "shifts": s} | {"kind": "skellam", "grid": j, "shifts": s} |
    # {"kind": "pure", "epsilon": e, "count": r} | {"kind": "gaussian", "noise_multiplier": σ/Δ₂} |
    # {"kind": "skellam-rdp", "releases": [[μ, Δ₁, Δ₂], ...]} (vector Skellam, composed in RDP: vector_skellam)
    pld: dict | None = None
    extra_delta: float = 0.0  # the part of δ outside the PLD (shares' truncation, clamping)
    proven: bool = True  # False: a paper calibration privacy.md / du.md mark "not proven DP"

    def __post_init__(self):
        if self.epsilon is not None and not (math.isfinite(self.epsilon) and self.epsilon >= 0):
            raise ValueError("ε must be finite and non-negative, or None for no finite bound")
        if not 0 <= self.extra_delta <= self.delta <= 1:
            raise ValueError("need 0 ≤ extra δ ≤ δ ≤ 1")
        if self.pld is not None and self.pld.get("kind") not in PLD_KINDS:
            raise ValueError(f"unknown PLD kind {self.pld.get('kind')!r}")

    def to_json(self) -> dict:
        return asdict(self)

    @property
    def unproven(self) -> bool:
        """No proven finite ε: a party runs it only if its own operator allowed that (docs/privacy-budget.md)."""
        return self.epsilon is None or not self.proven

    @classmethod
    def from_json(cls, value: dict) -> "Guarantee":
        return cls(value["epsilon"], float(value["delta"]), str(value["mechanism"]), value.get("pld"),
                   float(value.get("extra_delta", 0.0)), bool(value.get("proven", True)))


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
        from mpdp.privacy import binomial

        return binomial.shifts_pld(int(spec["tosses"]), int(spec["shifts"]) * folds)
    if kind == "skellam":
        from mpdp.privacy import skellam

        return skellam.shifts_pld(skellam.mu_of(int(spec["grid"])), int(spec["shifts"]) * folds)
    if kind == "pure":
        single = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(float(spec["epsilon"]), 0.0),
                                             value_discretization_interval=DISCRETIZATION)
        return single.self_compose(int(spec["count"]) * folds)
    single = pld.from_gaussian_mechanism(float(spec["noise_multiplier"]), sensitivity=1.0, pessimistic_estimate=True,
                                         value_discretization_interval=DISCRETIZATION)
    return single.self_compose(folds)


def pure_epsilon(epsilon: float, count: int, delta: float) -> float:
    """ε at δ of `count` ε-DP mechanisms composed, exactly (Kairouz–Oh–Viswanath 2015): the worst case is
    randomised response, whose privacy loss is (count − 2f)·ε with f ~ Bin(count, 1/(1 + e^ε)) flips, and
    δ(ε′) = Σ_{L_f > ε′} P(f)·(1 − e^(ε′ − L_f)). Between two loss values δ(ε′) = A − B·e^ε′, solved for ε′.
    What dp-accounting's PLD gives up to its discretisation, without its 50 MB of scipy.stats in a role."""
    if not (epsilon >= 0 and count >= 1 and 0 <= delta < 1):
        raise ValueError("need ε ≥ 0, at least one mechanism and 0 ≤ δ < 1")
    if epsilon == 0:
        return 0.0
    log_p, log_q = -math.log1p(math.exp(-epsilon)), -math.log1p(math.exp(epsilon))  # P(+ε), P(−ε) per fold
    mass, log_weighted = 0.0, -math.inf  # A and ln B over the losses above ε′, largest first
    for flips in range(count + 1):
        loss = (count - 2 * flips) * epsilon
        if loss <= 0:
            break
        log_prob = (math.lgamma(count + 1) - math.lgamma(flips + 1) - math.lgamma(count - flips + 1)
                    + (count - flips) * log_p + flips * log_q)
        mass += math.exp(log_prob)
        term = log_prob - loss
        log_weighted = max(log_weighted, term) + math.log1p(math.exp(-abs(log_weighted - term)))
        next_loss = max(0.0, loss - 2 * epsilon)
        if mass - math.exp(log_weighted + next_loss) >= delta:  # δ(next loss) ≥ δ ≥ δ(loss): ε′ is in between
            return max(next_loss, math.log(mass - delta) - log_weighted)
    return 0.0


def _folds(spec: dict) -> int:
    return int(spec.get("shifts", spec.get("count", 1)))


def compose(guarantees: list[Guarantee]) -> Composed:
    """See `_compose`. Without PLDs, or with pure-ε ones of a single ε (exact in closed form), it runs in the
    caller; otherwise in the accountant (a child process in a role)."""
    specs = [g.pld for g in guarantees if g.pld is not None]
    if all(spec["kind"] == "pure" for spec in specs) and len({float(spec["epsilon"]) for spec in specs}) <= 1:
        return _compose(guarantees)
    return _compose_in_accountant(guarantees)


def _compose(guarantees: list[Guarantee]) -> Composed:
    """(ε, δ) of all the releases together. δ is Σδ_i (as in basic composition); ε is the PLD composition's at
    the δ the PLD parts bring, where that is smaller than their basic sum, plus the others' ε by basic
    composition. Vector Skellam releases have no PLD here: they compose among themselves in RDP (_compose_rdp)
    and with the rest by basic composition."""
    if not guarantees:
        return Composed(0.0, 0.0, "nothing spent", 0, 0.0)
    rdp = [g for g in guarantees if g.pld is not None and g.pld["kind"] == "skellam-rdp"]
    if rdp:
        rest = _compose([g for g in guarantees if g.pld is None or g.pld["kind"] != "skellam-rdp"])
        part = _compose_rdp(rdp)
        if part.epsilon is None or rest.epsilon is None:
            return Composed(None, min(1.0, part.delta + rest.delta), "some release has no finite ε", len(guarantees))
        return Composed(part.epsilon + rest.epsilon, min(1.0, part.delta + rest.delta),
                        part.method + (f"; {rest.method}, basic composition of the two" if rest.releases else ""),
                        len(guarantees), (part.basic_epsilon or 0.0) + (rest.basic_epsilon or 0.0))
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
    pure_epsilons = {float(json.loads(key)["epsilon"]) for key in exact if json.loads(key)["kind"] == "pure"}
    if len(pure_epsilons) == 1 and all(json.loads(key)["kind"] == "pure" for key in exact):
        count = sum(groups[key] * _folds(json.loads(key)) for key in exact)
        pld_epsilon = min(pld_basic, pure_epsilon(pure_epsilons.pop(), count, pld_delta))
        return Composed(pld_epsilon + (basic - pld_basic), delta,
                        f"exact composition of {count} ε-DP mechanisms (Kairouz et al.)"
                        + (f", basic composition of {len(guarantees) - len(in_pld)}" if len(in_pld) < len(guarantees)
                           else ""), len(guarantees), basic)
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


def _compose_rdp(guarantees: list[Guarantee]) -> Composed:
    """Vector Skellam releases: their RDP curves add (exact for RDP), converted at the δ they bring less their
    truncation's; never above their basic sum."""
    from mpdp.privacy import vector_skellam

    delta = min(1.0, sum(g.delta for g in guarantees))
    basic = sum(g.epsilon for g in guarantees if g.epsilon is not None)
    releases = [vector_skellam.VectorRelease(float(mu), float(l1), float(l2))
                for g in guarantees for mu, l1, l2 in (g.pld or {})["releases"]]
    rdp_delta = sum(g.delta - g.extra_delta for g in guarantees)
    if not 0 < rdp_delta < 1:
        return Composed(basic, delta, "basic composition", len(guarantees), basic)
    epsilon = min(basic, vector_skellam.epsilon(releases, rdp_delta))
    return Composed(epsilon, delta, f"RDP composition of {len(releases)} vector Skellam release(s)",
                    len(guarantees), basic)


def skellam_rdp_guarantee(releases: list, delta: float, share_mu: float, bound: int, draws: int) -> Guarantee:
    """mpdp's Guarantee for vector Skellam releases (mpdp.privacy.vector_skellam.VectorRelease) together, composed by
    `_compose_rdp`: ε at δ less the truncation's δ/1000 share, and the δ really
    spent, the truncation's part (at this ε, for `draws` shares in all) as extra_delta. ValueError if the
    truncation costs more than its share, i.e. the run went beyond what B was sized for."""
    from mpdp.privacy import skellam, vector_skellam

    pld_delta = delta * (1 - skellam.TRUNCATION_SHARE_OF_DELTA)
    value = vector_skellam.epsilon(releases, pld_delta)
    extra = vector_skellam.truncation_delta(value, share_mu, bound, draws)
    if extra > delta * skellam.TRUNCATION_SHARE_OF_DELTA:
        raise ValueError(f"ε = {value:.4g} over {draws} shares exceeds what the truncation bound B = {bound} was "
                         "sized for: its δ share would be exceeded")
    first = releases[0]
    mechanism = (f"vector-skellam: unit {first.unit}, Sk(μ = {min(r.mu for r in releases):.6g}) per coordinate, "
                 f"Δ₁ = {max(r.l1 for r in releases):.6g}, Δ₂ = {max(r.l2 for r in releases):.6g}, "
                 f"{len(releases)} release(s) composed in RDP (Agarwal, Kairouz & Liu 2021, Thm 3.5)")
    pld = {"kind": "skellam-rdp", "releases": [[r.mu, r.l1, r.l2] for r in releases]}
    return Guarantee(value, pld_delta + extra, mechanism, pld, extra)


_compose_in_accountant = in_accountant(_compose)
