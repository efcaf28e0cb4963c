"""`mpdp experiment du`: Du–Li–Li's Section 4 on the data sets that ship here.

Three parties with 40 %, 30 % and 10 % of the rows, the remaining 20 % the test set (the paper's Bank
Marketing and Credit Default data are not available offline: a9a and breast cancer stand in). For ε per
round from 0.1 to 3.2: the misclassification rate and the training time of OFPA and OFAA as the paper
calibrates them, their correct counterparts (objective perturbation, the functional mechanism) and
LR_NoPrivacy; then cardinality (a fraction of each party's rows) and dimensionality (the first d′
features) sweeps at one ε. Results come from the in-process reference, the code the parties and the
server run; the network tests check that the wire computes the same rounds.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from launcher.common.experiment_plots import majority_line
from launcher.common.experiment_threads import single_blas_thread
from launcher.common.progress import steps
from mpdp.learning import datasets
from mpdp.protocols.du import accounting, reference
from mpdp.protocols.du.objectives import augment
from mpdp.protocols.du.parameters import METHODS, DuParameters

SPLIT = (0.4, 0.3, 0.1)  # of all rows; the remaining 20 % is the test set
EPSILONS = [0.1, 0.2, 0.4, 0.8, 1.6, 3.2]
TABLE_EPSILONS = (0.1, 0.8, 3.2)
FRACTIONS = [0.1, 0.25, 0.5, 1.0]
# One colour per method in every panel; red (C3) is left to the majority-class line.
COLOURS = {method: f"C{index}" for index, method in zip((0, 1, 2, 4, 5), METHODS)}
SCALINGS = {"a9a": "unit-rows"}  # a9a's one-hot rows each to norm 1 (standardising makes rare columns huge)
STAND_INS = {"a9a": "a9a stands in for Bank Marketing / Credit Default (not shipped)",
             "breast-cancer": "breast cancer (scikit-learn)"}


def split(dataset: datasets.Dataset, seed: int):
    order = np.random.default_rng(seed).permutation(len(dataset.labels))
    cuts = np.round(np.cumsum(SPLIT) * len(order)).astype(int)
    parts = [order[start:end] for start, end in zip([0, *cuts[:-1]], cuts)]
    return ([(dataset.features[i], dataset.labels[i]) for i in parts],
            (dataset.features[order[cuts[-1]:]], dataset.labels[order[cuts[-1]:]]))


def _parameters(method: str, epsilon: float, dimension: int, rounds: int, epochs: int, regularization: float):
    return DuParameters(method, epsilon, 1e-5, rounds, 0.0, epochs, 1.0, regularization, len(SPLIT), dimension,
                        100.0, False, 2 / 3, bytes(32))


def _noise_seeds(seed: int, point: tuple[int, ...], trials: int) -> list[int]:
    """Independent noise seeds for every (sweep, point, method): the curves' points do not share draws."""
    state = np.random.SeedSequence(seed, spawn_key=point).generate_state(trials, np.uint64)
    # Shifted as Python ints: NumPy 1.26 has no uint64 >> int (it promotes the pair to float64).
    return [(int(s) >> 1) + 1 for s in state]  # 0 would mean an unseeded stream


def _runs(parameters: DuParameters, parts, test, trials: int, seed: int, point: tuple[int, ...]) -> dict:
    augmented = [(augment(x), y.astype(float)) for x, y in parts]
    errors, seconds = [], []
    runs = trials if parameters.private else 1
    for noise_seed in _noise_seeds(seed, (*point, METHODS.index(parameters.method)), runs):
        # CPU time, not wall time: on a shared machine the wall clock measures the other jobs (the same noise-free
        # run once took 34.0, 17.8 and 4.5 s). The parties run one after the other in this process.
        started = time.process_time()
        history = reference.run(parameters, augmented, noise_seed=noise_seed)
        seconds.append((time.process_time() - started) / len(parts))
        errors.append(float(np.mean(reference.predict(history.final, test[0]) != test[1])))
    return {"mean": float(np.mean(errors)), "std": float(np.std(errors)), "trials": len(errors),
            "cpu_seconds_per_party": float(np.mean(seconds))}


def run_dataset(name: str, data_dir, epsilons: list[float], trials: int, rounds: int, epochs: int,
                regularization: float, seed: int, sweep_epsilon: float, sweeps: bool = True) -> dict:
    dataset = datasets.load(name, data_dir=data_dir, scaling=SCALINGS.get(name, "standardise"))
    if dataset.classes != 2:
        raise ValueError(f"{name} has {dataset.classes} classes; Du's logistic regression is binary")
    parts, test = split(dataset, seed)
    dimension = dataset.features.shape[1]
    result: dict[str, Any] = {"dataset": name, "stand_in": STAND_INS.get(name, name), "dimension": dimension,
                              "scaling": SCALINGS.get(name, "standardise"),
                              "party_rows": [len(y) for _, y in parts], "test_rows": len(test[1]),
                              "majority_error": float(min(np.mean(test[1]), 1 - np.mean(test[1]))),
                              "epsilon_sweep": [], "cardinality_sweep": [], "dimensionality_sweep": []}
    with steps(len(epsilons), f"{name}: ε sweep") as done:
        for index, epsilon in enumerate(epsilons):
            point: dict[str, Any] = {"epsilon": epsilon}
            for method in METHODS:
                parameters = _parameters(method, epsilon, dimension, rounds, epochs, regularization)
                point[method] = {**_runs(parameters, parts, test, trials, seed, (0, index)),
                                 "epsilon_composed_basic": accounting.report(parameters, rounds).get("epsilon_composed_basic")}
            result["epsilon_sweep"].append(point)
            print(f"    {name} ε = {epsilon:g}: " + ", ".join(f"{m} {point[m]['mean']:.3f}" for m in METHODS),
                  file=sys.stderr, flush=True)
            done.advance(f"ε = {epsilon:g}")
    if not sweeps:  # Figure 2 only: the cardinality and dimension sweeps' lists stay empty
        return result
    rng = np.random.default_rng(seed)
    for index, fraction in enumerate(FRACTIONS):  # cardinality: each party keeps this fraction of its rows
        subset = [(x[keep], y[keep]) for x, y in parts
                  for keep in [rng.permutation(len(y))[:max(2, int(round(fraction * len(y))))]]]
        point = {"fraction": fraction, "rows": sum(len(y) for _, y in subset)}
        for method in METHODS:
            point[method] = _runs(_parameters(method, sweep_epsilon, dimension, rounds, epochs, regularization),
                                  subset, test, trials, seed, (1, index))
        result["cardinality_sweep"].append(point)
    for index, kept in enumerate(sorted({max(1, dimension // 8), max(1, dimension // 4), max(1, dimension // 2), dimension})):
        sliced = [(x[:, :kept], y) for x, y in parts]
        point = {"dimension": kept}
        for method in METHODS:
            point[method] = _runs(_parameters(method, sweep_epsilon, kept, rounds, epochs, regularization),
                                  sliced, (test[0][:, :kept], test[1]), trials, seed, (2, index))
        result["dimensionality_sweep"].append(point)
    print(f"    {name}: sweeps done", file=sys.stderr, flush=True)
    return result


@single_blas_thread
def run(out: Path, names: list[str], data_dir, epsilons: list[float], trials: int, rounds: int, epochs: int,
        regularization: float, seed: int, sweep_epsilon: float = 0.8, sweeps: bool = True) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    report: dict[str, Any] = {
        "experiment": "du", "split": "40 % / 30 % / 10 % to three parties, 20 % test", "epsilons": epsilons,
        "rounds": rounds, "local_epochs": epochs, "lambda": regularization, "trials": trials, "seed": seed,
        "sweep_epsilon": sweep_epsilon, "mode": "in-process reference (the parties' and the server's code)",
        "bands": "±1 standard deviation over the trials",
        "noise_seeds": "independent for every (sweep, point, method): no two points share a draw",
        "epsilon_note": "ε is per round; a run of R rounds spends R·ε (basic composition)",
        "datasets": [],
    }
    for name in names:
        print(f"  {name} …", file=sys.stderr, flush=True)
        report["datasets"].append(run_dataset(name, data_dir, epsilons, trials, rounds, epochs, regularization,
                                              seed, sweep_epsilon, sweeps))
    report["seconds"] = time.perf_counter() - started
    report["plots"] = [plot(result, report, out) for result in report["datasets"]]
    (out / "du_report.json").write_text(json.dumps(report, indent=2))
    return report


def plot(result: dict, report: dict, out: Path) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 4, figsize=(19, 4.3))
    sweeps = [("epsilon_sweep", "epsilon", "ε per round", "misclassification rate"),
              ("epsilon_sweep", "epsilon", "ε per round", "training CPU time per party (s)"),
              ("cardinality_sweep", "rows", "training rows (all parties)", "misclassification rate"),
              ("dimensionality_sweep", "dimension", "features used", "misclassification rate")]
    for axis, (key, x_key, x_label, y_label) in zip(axes, sweeps):
        points = result[key]
        if y_label.startswith("training") and points and "cpu_seconds_per_party" not in points[0]["none"]:
            axis.text(0.5, 0.5, "not drawn: this run timed wall clock\non a shared machine, which measures\n"
                                "its load, not the training", transform=axis.transAxes, ha="center", va="center")
            axis.set_xlabel(x_label)
            continue
        if not points:  # a run without the sweeps (--no-sweeps)
            axis.text(0.5, 0.5, "not run (--no-sweeps)", transform=axis.transAxes, ha="center")
            axis.set_xlabel(x_label)
            continue
        xs = [p[x_key] for p in points]
        for method in METHODS:
            if y_label.startswith("training"):
                axis.plot(xs, [p[method]["cpu_seconds_per_party"] for p in points], marker="o", label=method,
                          color=COLOURS[method])
            else:
                axis.errorbar(xs, [p[method]["mean"] for p in points], yerr=[p[method]["std"] for p in points],
                              marker="o", capsize=2, label=method, color=COLOURS[method])
        if key == "epsilon_sweep":
            axis.set_xscale("log", base=2)
        if not y_label.startswith("training"):
            majority_line(axis, result["majority_error"], "error")
        axis.set_xlabel(x_label)
        axis.set_ylabel(y_label)
    axes[0].legend(fontsize=7)
    if result["cardinality_sweep"]:
        axes[2].legend(fontsize=7)
    figure.suptitle(f"Du–Li–Li on {result['stand_in']}: {report['rounds']} rounds × {report['local_epochs']} local "
                    f"epochs, sweeps at ε = {report['sweep_epsilon']} (bars: ±1 std over {report['trials']} trials); "
                    "ofpa/ofaa: paper calibration, not proven DP", fontsize=9)
    figure.tight_layout()
    name = f"du_{result['dataset']}.png"
    figure.savefig(out / name, dpi=100)
    plt.close(figure)
    return name


def misclassification_table(report: dict) -> str:
    lines = []
    for result in report["datasets"]:
        lines.append(f"{result['stand_in']} (parties {result['party_rows']}, test {result['test_rows']}, "
                     f"majority-class error {result['majority_error']:.3f}); ε per round, {report['rounds']} rounds")
        lines.append("  ε      " + "  ".join(f"{m:>16}" for m in METHODS))
        for point in result["epsilon_sweep"]:
            if point["epsilon"] in TABLE_EPSILONS or len(result["epsilon_sweep"]) <= 3:
                lines.append(f"  {point['epsilon']:<6g} " + "  ".join(
                    f"{point[m]['mean']:.3f} ± {point[m]['std']:.3f}".rjust(16) for m in METHODS))
    return "\n".join(lines)
