"""Before any cryptography: the expected noise of a release against the signal it perturbs, from public
quantities only (ε, λ, d, K, C, the party sizes the operator chose), with the fix when the noise swamps the model.

Signal: a λ-regularised logistic (C = 2) or softmax model on rows in the unit ball has ‖w‖ ≤ √(2·ln C/λ): its
objective at w = 0 is ln C, the minimiser's is no larger, and the loss is non-negative, so λ/2‖w‖² ≤ ln C. The
bound reads no data. Output perturbation with L2 sensitivity Δ adds η with E‖η‖ = D·Δ/ε (l2-laplace: a
uniform direction, ‖η‖ ~ Gamma(D, Δ/ε)). What a prediction sees is η·x: on a unit row its standard deviation
is √(E‖η‖²/D) = √(D + 1)·Δ/ε, while the model's score w·x is at most ‖w‖. Hamm's check compares those two;
Pathak's still compares the norms.
"""

from __future__ import annotations

import math

import numpy as np

NOISY = 1.0  # expected noise above the largest model the regulariser allows: one draw decides the result
TOO_NOISY = 3.0  # three times that: the release cannot learn
TARGET = 0.5  # the fix aims at noise half the model's bound


def weight_bound(regularization: float, classes: int = 2) -> float:
    """The largest ‖w‖ the regulariser allows a C-class logistic/softmax minimiser on unit-ball rows."""
    return math.sqrt(2 * math.log(max(2, classes)) / regularization)


def score_noise(weights: int, sensitivity: float, epsilon: float) -> float:
    """Standard deviation of η·x on a unit row x for l2-laplace noise on D weights: E‖η‖² = D(D + 1)(Δ/ε)²,
    spread evenly over the D directions."""
    return math.sqrt(weights + 1) * sensitivity / epsilon


def _dimension(client_data: dict) -> int:
    return int(client_data["test_features"].shape[1])


def _party_sizes(client_data: dict) -> list[int]:
    sizes = client_data.get("party_sizes")
    return [int(v) for v in np.atleast_1d(sizes)] if sizes is not None else []


def hamm(args, parties: int, client_data: dict, colluding: int = 1) -> dict | None:
    if math.isinf(args.epsilon):
        return None
    if getattr(args, "noisy_counts", False):
        return hamm_counts(args, parties, client_data, colluding)
    classes = int(client_data["classes"])
    weights = _dimension(client_data) * (1 if classes == 2 else classes)
    per_party = (2.0 if classes == 2 else math.sqrt(2)) / args.regularization  # one party's model moves w by Δ·M
    voters = parties if args.method == "soft" else 1
    noise = score_noise(weights, per_party / voters, args.epsilon)
    signal = weight_bound(args.regularization, classes)
    needed = (math.ceil(score_noise(weights, per_party, args.epsilon) / (TARGET * signal))
              if args.method == "soft" else None)
    fix = (f"raise M (logical parties: `mpdp up --parties {needed} --parties-per-process {max(1, needed // 4)}`) "
           f"or λ (--lambda; noise ∝ 1/(Mλ), the model bound ∝ 1/√λ)" if needed else
           "use --method soft (its sensitivity falls as 1/M) or raise λ")
    return _check("Hamm output perturbation", noise, signal,
                  f"std of the noise on a class score √(D + 1)·Δ/ε = √({weights} + 1)·{per_party:.3g}/({voters}·ε) "
                  f"against the largest score √(2·ln {classes}/λ)", fix, parties,
                  signal_name="the largest score the regulariser allows", short="score bound",
                  noise_name="noise std on a class score")


def hamm_counts(args, parties: int, client_data: dict, colluding: int = 1) -> dict | None:
    """Noisy counts: each soft target α = count/M carries noise of std √(M·N_i)/(2M) (M shares Bin(N_i, ½)); Charlie's
    fit over N public points keeps about the share d/N of it (the projection on a d-dimensional model), so
    σ_α·√(d/N) against the largest target margin ½. λ-free: the release is post-processing of the counts."""
    if getattr(args, "count_noise", "binomial") != "binomial":
        return None
    from mpdp.protocols.hamm.parameters import DEFAULT_HONEST_FRACTION, HammParameters

    points, d = len(client_data.get("public_features", ())), _dimension(client_data)
    if points < 1:
        return None
    chosen = HammParameters("soft", args.epsilon, args.delta, args.regularization, int(client_data["classes"]),
                            parties, points, d, True, False, DEFAULT_HONEST_FRACTION, bytes(32),
                            colluding=colluding)
    target_std = math.sqrt(parties * chosen.tosses_per_party) / (2 * parties)
    noise = target_std * math.sqrt(min(1.0, d / points))
    return _check("Hamm noisy counts", noise, 0.5,
                  f"a soft target's noise std √(M·N_i)/(2M) = {target_std:.3g} with N_i = {chosen.tosses_per_party}, "
                  f"× √(d/N) = √({d}/{points}) for Charlie's fit, against the largest target margin ½",
                  "raise M (logical parties; the noise falls as 1/M: `mpdp up --parties … --parties-per-process …`) "
                  "or ε", parties, signal_name="the largest soft-target margin", short="target margin")


def pathak(args, parties: int, client_data: dict) -> dict | None:
    sizes = _party_sizes(client_data)
    if not sizes:
        return None
    smallest, d = min(sizes), _dimension(client_data)
    delta = 2 / (smallest * args.regularization)  # Δ = 2/(n_(1)·λ)
    if getattr(args, "calibration", "paper") == "tight":
        delta /= parties
    noise = d * delta / args.epsilon
    signal = weight_bound(args.regularization)
    return _check("Pathak output perturbation", noise, signal,
                  f"D·Δ/ε with Δ = 2/(n_(1)·λ), n_(1) = {smallest}", "raise λ (--lambda), ε, or the smallest party's "
                  "rows (--split even)", parties)


def du(args, parties: int, client_data: dict) -> dict | None:
    if args.method == "none":
        return None
    sizes = _party_sizes(client_data)
    if not sizes:
        return None
    if args.method == "objective":
        return du_objective(args, parties, sizes, _dimension(client_data) + 1)
    coefficients = (_dimension(client_data) + 1) * (_dimension(client_data) + 2) // 2
    noise = 3 * math.sqrt(2 * coefficients) / args.epsilon  # ‖Lap(3/ε) on every coefficient‖
    signal = min(sizes) / 4  # ‖A‖ ≤ n_i/8·‖x̃‖² ≤ n_i/4
    return _check("Du functional mechanism (per party, per round)", noise, signal,
                  f"‖Lap(3/ε)‖ over {coefficients} coefficients against n_i/4, n_i = {min(sizes)}",
                  "raise ε per round, the parties' rows, or lower d", parties)


def du_objective(args, parties: int, sizes: list[int], weights: int) -> dict:
    """Objective perturbation (Chaudhuri et al. 2011, Algorithm 2): b with ‖b‖ ~ Gamma(D, 2/ε′) enters the
    objective as bᵀφ/n, which is (λ + Δ)-strongly convex, so it moves the minimiser by at most ‖b‖/(n(λ + Δ)); the
    server averages K parties' independent draws (÷ √K). Against the model bound at λ + Δ."""
    from mpdp.protocols.du.objectives import objective_perturbation_terms

    smallest = min(sizes)
    epsilon_prime, extra = objective_perturbation_terms(args.epsilon, smallest, args.regularization)
    strength = args.regularization + extra
    noise = weights * (2 / epsilon_prime) / (smallest * strength) / math.sqrt(max(1, parties))
    return _check("Du objective perturbation (per party, per round)", noise, weight_bound(strength),
                  f"E‖b‖/(n_i(λ + Δ))/√K = {weights}·(2/{epsilon_prime:.3g})/({smallest}·{strength:.3g})/√{parties}",
                  "raise λ or ε per round, or the parties' rows", parties)


def _check(what: str, noise: float, signal: float, formula: str, fix: str, parties: int,
           signal_name: str = "the largest model the regulariser allows", short: str = "model bound",
           noise_name: str = "expected ‖noise‖") -> dict:
    ratio = noise / signal
    result: dict = {"release": what, "noise": noise, "noise_name": noise_name, "signal_bound": signal,
                    "ratio": ratio, "signal": short, "formula": formula, "parties": parties, "warnings": []}
    if ratio > NOISY:
        verdict = ("it cannot learn" if ratio > TOO_NOISY else
                   "one noise draw decides the result (`--repeat R` shows the spread)")
        result["warnings"].append(f"{what}: at M = {parties} the {noise_name} is {ratio:.3g}× {signal_name} "
                                  f"({formula}); {verdict}: {fix}")
    return result


def dppp(args, parties: int, client_data: dict, colluding: int = 1) -> dict | None:
    """A unanimous vote's margin is T·K (K teachers, each ballot the votes of its T models); the difference of two
    noisy counts has std √(K·N_i/2) (Bin(N_i, ½) from every teacher), which depends on ε, δ and Q, not on K or
    T. Their ratio is the noise against the signal. N_i is calibrated against one principal's `colluding`
    teachers, as the client will."""
    if getattr(args, "noise", "binomial") != "binomial":
        return None
    from mpdp.privacy.binomial import BinomialCalibration
    from mpdp.protocols.dppp.parameters import DEFAULT_HONEST_FRACTION, DpppParameters

    queries = min(args.queries, len(client_data.get("public_features", ())))
    if queries < 1:
        return None
    calibration = DpppParameters.with_minimal_noise(args.epsilon, args.delta, queries, int(client_data["classes"]),
                                                    parties, DEFAULT_HONEST_FRACTION, True, bytes(32),
                                                    colluding=colluding).calibration
    if not isinstance(calibration, BinomialCalibration):
        return None
    tosses = calibration.tosses_per_teacher
    size = getattr(args, "ensemble", 1)
    noise = math.sqrt(parties * tosses / 2)
    margin = size * parties
    return _check("DPPP vote histogram", noise, margin,
                  f"std √(K·N_i/2) of a count difference, N_i = {tosses} over {queries} queries, against the "
                  f"unanimous margin T·K = {size}·{parties}",
                  f"a larger ensemble per teacher (`--ensemble {max(2 * size, 4)}`: the margin grows with T, the "
                  "noise does not), more teachers, or a larger ε",
                  parties, signal_name="the unanimous vote's margin", short="unanimous margin")


CHECKS = {"hamm": hamm, "pathak": pathak, "du": du, "dppp": dppp}


def estimate(protocol: str, args, topology, client_data: dict) -> dict:
    check = CHECKS.get(protocol)
    if protocol == "dppp":  # N_i depends on how many teachers one principal hosts
        found = dppp(args, len(topology.parties), client_data, topology.colluding)
    elif protocol == "hamm":  # so does N_i of noisy counts
        found = hamm(args, len(topology.parties), client_data, getattr(topology, "colluding", 1))
    else:
        found = check(args, len(topology.parties), client_data) if check else None
    return found or {"warnings": []}


def line(check: dict) -> str | None:
    if "ratio" not in check:
        return None
    return (f"noise check ({check['release']}): {check['noise_name']} {check['noise']:.3g} against a "
            f"{check.get('signal', 'model bound')} {check['signal_bound']:.3g} ({check['ratio']:.2g}×)")


def demo_lines(args, topology, client_data_path, protocols) -> list[str]:
    """Before the demo's first session: for every protocol, whether its release can learn at these settings."""
    from launcher import client
    from launcher.protocol import protocol_arguments

    client_data = client.load_client_data(client_data_path)
    lines = ["before running: each release's expected noise against its signal, per protocol"]
    for protocol in protocols:
        check = estimate(protocol.name, protocol_arguments(args, protocol), topology, client_data)
        if "ratio" not in check:
            lines.append(f"  {protocol.name}: no output perturbation to check (its noise is on the labels)")
            continue
        verdict = ("can learn" if check["ratio"] <= NOISY else "noisy, one draw decides"
                   if check["ratio"] <= TOO_NOISY else "CANNOT learn here")
        lines.append(f"  {protocol.name}: {verdict}: {line(check)}")
        lines += [f"    {warning}" for warning in check["warnings"]]
    return lines
