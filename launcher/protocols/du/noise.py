"""Du's release against its noise before a session (`launcher/common/noise_check.py` says how the check reads)."""

from __future__ import annotations

import math

from launcher.common import noise as shared
from mpdp.learning import evaluation
from mpdp.learning import noise_spread as spreads


def release(args, parties: int, client_data: dict) -> dict | None:
    if args.method == "none":
        return None
    sizes = shared.party_sizes(client_data)
    if not sizes:
        return None
    if args.method == "objective":
        return objective(args, parties, sizes, shared.dimension(client_data) + 1)
    coefficients = (shared.dimension(client_data) + 1) * (shared.dimension(client_data) + 2) // 2
    noise = 3 * math.sqrt(2 * coefficients) / args.epsilon  # ‖Lap(3/ε) on every coefficient‖
    signal = min(sizes) / 4  # ‖A‖ ≤ n_i/8·‖x̃‖² ≤ n_i/4
    return shared.judged("Du functional mechanism (per party, per round)", noise, signal,
                  f"‖Lap(3/ε)‖ over {coefficients} coefficients against n_i/4, n_i = {min(sizes)}",
                  "raise ε per round, the parties' rows, or lower d", parties)


def objective(args, parties: int, sizes: list[int], weights: int) -> dict:
    """Objective perturbation (Chaudhuri et al. 2011, Algorithm 2): b with ‖b‖ ~ Gamma(D, 2/ε′) enters the
    objective as bᵀφ/n, which is (λ + Δ)-strongly convex, so it moves the minimiser by at most ‖b‖/(n(λ + Δ)); the
    server averages K parties' independent draws (÷ √K). Against the model bound at λ + Δ."""
    from mpdp.protocols.du.objectives import objective_perturbation_terms

    smallest = min(sizes)
    epsilon_prime, extra = objective_perturbation_terms(args.epsilon, smallest, args.regularization)
    strength = args.regularization + extra
    noise = weights * (2 / epsilon_prime) / (smallest * strength) / math.sqrt(max(1, parties))
    return shared.judged("Du objective perturbation (per party, per round)", noise, shared.weight_bound(strength),
                  f"E‖b‖/(n_i(λ + Δ))/√K = {weights}·(2/{epsilon_prime:.3g})/({smallest}·{strength:.3g})/√{parties}",
                  "raise λ or ε per round, or the parties' rows", parties)


def check(args, topology, client_data: dict) -> dict | None:
    return release(args, len(topology.parties), client_data)


def spread(report: dict, topology, client_data: dict) -> dict:
    """Reruns of Du's reference (mpdp/protocols/du/reference.py) on the parties' data with fresh noise."""
    from mpdp.protocols.du import reference
    from mpdp.protocols.du.objectives import augment
    from mpdp.protocols.du.parameters import DuParameters

    given = report["parameters"]
    if given["method"] == "none":
        return spreads.unavailable("non-private (--method none): no privacy noise")
    parts = shared.parts(topology)
    if parts is None:
        return spreads.unavailable("the noise enters the objective's coefficients, sums over the parties' rows: "
                                  "redrawing it needs their data files (not here; use --repeat)")
    parameters = DuParameters(given["method"], given["epsilon"], given.get("delta", 1e-5), given["rounds"],
                              given["tolerance"], given["local_epochs"], given["learning_rate"], given["lambda"],
                              given["parties"], given["dimension"], given["bound"], False, 2 / 3, bytes(32),
                              given["batch_size"])
    augmented = [(augment(x), y) for x, y in parts]
    models = [reference.run(parameters, augmented, 1 + k).released(parameters) for k in range(spreads.RERUNS)]
    return spreads.over_models(models, lambda theta, rows: augment(rows) @ theta, client_data["test_features"],
                              client_data["test_labels"], evaluation.public_rows(client_data),
                              f"Du's {parameters.method} noise")
