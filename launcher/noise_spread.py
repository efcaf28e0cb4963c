"""The spread one release's figures are expected to have from its privacy noise, per protocol
(mpdp/learning/noise_spread.py says what each estimate measures and its bias); `unavailable` with the reason
where it cannot be computed."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import numpy as np

from mpdp.learning import evaluation
from mpdp.learning import noise_spread as spread


def _data_files(topology) -> list[Path] | None:
    files = [Path(entry.data) for entry in topology.parties if entry.data is not None]
    return files if files and len(files) == len(topology.parties) and all(f.is_file() for f in files) else None


def _parts(topology) -> list[tuple[np.ndarray, np.ndarray]] | None:
    from mpdp.learning.datasets import load_part

    files = _data_files(topology)
    return [load_part(f)[:2] for f in files] if files else None


def pathak(report: dict, topology, client_data: dict) -> dict:
    """η = ζ/(2^F·K): the selected party's noise at n_(1), or every party's share (distributed)."""
    from mpdp.protocols.pathak.parameters import PathakParameters

    given = report["parameters"]
    parameters = PathakParameters(**{f.name: given[f.name] for f in dataclasses.fields(PathakParameters)})
    if parameters.calibrate_to == "n_min" or parameters.distributed:
        records = parameters.n_min
    else:  # n_(1) is hidden from the client; the operator's data files know it
        parts = _parts(topology)
        if parts is None:
            return spread.unavailable("the noise is calibrated to n_(1), which only the parties' data files "
                                      "(not here) tell")
        records = min(len(y) for _, y in parts)
    scale = 2.0 ** parameters.fractional_bits * parameters.parties
    shares = parameters.parties if parameters.distributed else 1

    def draw(k: int) -> np.ndarray:
        total = np.zeros(parameters.dimension)
        for j in range(shares):
            total += np.asarray(parameters.draw_noise(records, random.Random(f"mpdp/noise-spread/{k}/{j}")),
                                dtype=float)
        return total / scale

    w = np.asarray(report["result"]["w"], dtype=float)
    return spread.around_release(w, draw, client_data["test_features"], client_data["test_labels"],
                                 evaluation.public_rows(client_data), f"Pathak's {parameters.mechanism} noise")


def hamm(report: dict, topology, client_data: dict) -> dict:
    """η of the l2-laplace release (Release.sample), around Charlie's released classifier."""
    from mpdp.protocols.hamm.parameters import HammParameters
    from mpdp.protocols.hamm.release import Release

    given, result = report["parameters"], report["result"]
    if given["noisy_counts"]:
        return spread.unavailable("the noise is on the vote counts Charlie trains on; redrawing it needs the "
                                  "counts, which only Charlie saw (use --repeat)")
    if given["epsilon"] is None:
        return spread.unavailable("non-private (ε = ∞): no privacy noise")
    weights = np.asarray(result["weights"], dtype=float)
    if weights.ndim != 1:
        return spread.unavailable("a multiclass release: the spread is given for binary releases only")
    parameters = HammParameters(given["method"], given["epsilon"], given["delta"], given["lambda"], given["classes"],
                                given["parties"], given["aux_points"], given["dimension"], False,
                                given["protect_aux"], given["honest_fraction"], bytes(32), given["count_noise"])
    release = Release(parameters, int(result["voters"]))
    return spread.around_release(weights, lambda k: release.sample(random.Random(f"mpdp/noise-spread/{k}")),
                                 client_data["test_features"], client_data["test_labels"],
                                 evaluation.public_rows(client_data),
                                 f"Hamm's l2-laplace output perturbation (‖η‖ ~ Gamma(D, {release.norm_scale:.3g}))")


def du(report: dict, topology, client_data: dict) -> dict:
    """Reruns of Du's reference (mpdp/protocols/du/reference.py) on the parties' data with fresh noise."""
    from mpdp.protocols.du import reference
    from mpdp.protocols.du.objectives import augment
    from mpdp.protocols.du.parameters import DuParameters

    given = report["parameters"]
    if given["method"] == "none":
        return spread.unavailable("non-private (--method none): no privacy noise")
    parts = _parts(topology)
    if parts is None:
        return spread.unavailable("the noise enters the objective's coefficients, sums over the parties' rows: "
                                  "redrawing it needs their data files (not here; use --repeat)")
    parameters = DuParameters(given["method"], given["epsilon"], given.get("delta", 1e-5), given["rounds"],
                              given["tolerance"], given["local_epochs"], given["learning_rate"], given["lambda"],
                              given["parties"], given["dimension"], given["bound"], False, 2 / 3, bytes(32),
                              given["batch_size"])
    augmented = [(augment(x), y) for x, y in parts]
    models = [reference.run(parameters, augmented, 1 + k).released(parameters) for k in range(spread.RERUNS)]
    return spread.over_models(models, lambda theta, rows: augment(rows) @ theta, client_data["test_features"],
                              client_data["test_labels"], evaluation.public_rows(client_data),
                              f"Du's {parameters.method} noise")


ESTIMATES = {"pathak": pathak, "hamm": hamm, "du": du}
DPPP = ("the noise is on the teachers' vote counts: redrawing it needs every teacher's votes, and the student "
        "retrained on each draw (use --repeat)")


def estimate(protocol: str, report: dict, topology, client_data: dict) -> dict:
    """The noise's spread for the release in `report`; never fails the run (a reason instead)."""
    if protocol == "dppp":
        return spread.unavailable(DPPP)
    found = ESTIMATES.get(protocol)
    if found is None:
        return spread.unavailable(f"no estimate for {protocol}")
    if "test_metrics" not in report.get("result", {}):
        return spread.unavailable("no test metrics in the report")
    try:
        return found(report, topology, client_data)
    except (KeyError, TypeError, ValueError) as reason:
        return spread.unavailable(f"not computed: {reason}")
