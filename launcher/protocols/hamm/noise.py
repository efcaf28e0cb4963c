"""Hamm's release against its noise before a session (`launcher/common/noise_check.py` says how the check reads)."""

from __future__ import annotations

import math
import random

import numpy as np

from launcher.common import noise as shared
from launcher.protocols.hamm import preview
from mpdp.learning import evaluation
from mpdp.learning import noise_spread as spreads


def release(args, parties: int, client_data: dict, colluding: int = 1, topology=None) -> dict | None:
    """The noise on a class score against the scores the release would have without it: from the operator's
    preview (launcher/protocols/hamm/preview.py) where this launcher holds the parties' data, else against the
    largest score the regulariser allows, which a fit to vote fractions comes nowhere near (said in the line)."""
    if math.isinf(args.epsilon):
        return None
    if getattr(args, "noisy_counts", False):
        return counts(args, parties, client_data, colluding)
    classes = int(client_data["classes"])
    weights = shared.dimension(client_data) * (1 if classes == 2 else classes)
    per_party = (2.0 if classes == 2 else math.sqrt(2)) / args.regularization  # one party's model moves w by Δ·M
    voters = parties if args.method == "soft" else 1
    noise = shared.score_noise(weights, per_party / voters, args.epsilon)
    noise_formula = f"√(D + 1)·Δ/ε = √({weights} + 1)·{per_party:.3g}/({voters}·ε)"
    seen = preview.vote_fractions(topology, client_data) if topology is not None else None
    spread = (preview.score_spread(args.method, args.regularization, client_data["public_features"], seen[0])
              if seen is not None else None)
    if seen is not None and spread is not None:
        # the spread does not depend on M (α̂ is an average); a release that scores every row alike cannot rank them
        signal, sampled = max(spread, 1e-12), seen[1]
        read = "every party's" if sampled == parties else f"{sampled} randomly chosen parties'"
        formula = (f"std of the noise on a class score {noise_formula} against the spread of the release's scores "
                   f"without noise (std) over Charlie's {len(client_data['public_features'])} public rows, previewed from "
                   f"{read} local models on the operator's copy of their data")
        names = dict(signal_name="the scores' spread without noise", short="score spread without noise")
        lever = "λ (--lambda; the noise falls as 1/λ, the release's spread more slowly)"
    else:
        signal = shared.weight_bound(args.regularization, classes)
        formula = (f"std of the noise on a class score {noise_formula} against the largest score "
                   f"√(2·ln {classes}/λ), which a fit to vote fractions stays far below: without the parties' "
                   "data here, nothing smaller is known")
        names = dict(signal_name="the largest score the regulariser allows", short="score bound")
        lever = "λ (--lambda; noise ∝ 1/(Mλ), the model bound ∝ 1/√λ)"
    needed = (math.ceil(shared.score_noise(weights, per_party, args.epsilon) / (shared.TARGET * signal))
              if args.method == "soft" else None)
    fix = (f"raise M (logical parties: `mpdp up --parties {needed} --parties-per-process {max(1, needed // 4)}`) "
           f"or {lever}" if needed else "use --method soft (its sensitivity falls as 1/M) or raise λ")
    return shared.judged("Hamm output perturbation", noise, signal, formula, fix, parties,
                         noise_name="noise std on a class score", **names)


def counts(args, parties: int, client_data: dict, colluding: int = 1) -> dict | None:
    """Noisy counts: each soft target α = count/M carries noise of std √(M·N_i)/(2M) (M shares Bin(N_i, ½)); Charlie's
    fit over N public points keeps about the share d/N of it (the projection on a d-dimensional model), so
    σ_α·√(d/N) against the largest target margin ½. λ-free: the release is post-processing of the counts."""
    if getattr(args, "count_noise", "binomial") != "binomial":
        return None
    from mpdp.protocols.hamm.parameters import DEFAULT_HONEST_FRACTION, HammParameters

    points, d = len(client_data.get("public_features", ())), shared.dimension(client_data)
    if points < 1:
        return None
    chosen = HammParameters("soft", args.epsilon, args.delta, args.regularization, int(client_data["classes"]),
                            parties, points, d, True, False, DEFAULT_HONEST_FRACTION, bytes(32),
                            colluding=colluding)
    target_std = math.sqrt(parties * chosen.tosses_per_party) / (2 * parties)
    noise = target_std * math.sqrt(min(1.0, d / points))
    return shared.judged("Hamm noisy counts", noise, 0.5,
                  f"a soft target's noise std √(M·N_i)/(2M) = {target_std:.3g} with N_i = {chosen.tosses_per_party}, "
                  f"× √(d/N) = √({d}/{points}) for Charlie's fit, against the largest target margin ½",
                  "raise M (logical parties; the noise falls as 1/M: `mpdp up --parties … --parties-per-process …`) "
                  "or ε", parties, signal_name="the largest soft-target margin", short="target margin")


def check(args, topology, client_data: dict) -> dict | None:
    """N_i of noisy counts depends on how many parties one principal hosts."""
    return release(args, len(topology.parties), client_data, getattr(topology, "colluding", 1), topology)


def spread(report: dict, topology, client_data: dict) -> dict:
    """η of the l2-laplace release (Release.sample), around Charlie's released classifier."""
    from mpdp.protocols.hamm.parameters import HammParameters
    from mpdp.protocols.hamm.release import Release

    given, result = report["parameters"], report["result"]
    if given["noisy_counts"]:
        return spreads.unavailable("the noise is on the vote counts Charlie trains on; redrawing it needs the "
                                  "counts, which only Charlie saw (use --repeat)")
    if given["epsilon"] is None:
        return spreads.unavailable("non-private (ε = ∞): no privacy noise")
    weights = np.asarray(result["weights"], dtype=float)
    if weights.ndim != 1:
        return spreads.unavailable("a multiclass release: the spread is given for binary releases only")
    parameters = HammParameters(given["method"], given["epsilon"], given["delta"], given["lambda"], given["classes"],
                                given["parties"], given["aux_points"], given["dimension"], False,
                                given["protect_aux"], given["honest_fraction"], bytes(32), given["count_noise"])
    release = Release(parameters, int(result["voters"]))
    return spreads.around_release(weights, lambda k: release.sample(random.Random(f"mpdp/noise-spread/{k}")),
                                 client_data["test_features"], client_data["test_labels"],
                                 evaluation.public_rows(client_data),
                                 f"Hamm's l2-laplace output perturbation (‖η‖ ~ Gamma(D, {release.norm_scale:.3g}))")
