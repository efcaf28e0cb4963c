"""`mpdp experiment hamm`: Hamm–Cao–Belkin's comparison (Section 6, Figures 2–4).

batch, soft, avg, vote and indiv over 1/ε ∈ {0, 0.1, 1, 10, 100}, λ = 1e-4, 10 % of the training rows as
X_aux and the rest split evenly among M parties; every classifier is λ/2‖w‖² logistic / softmax regression
(`logistic-exact`), as in the paper. a9a with M = 1 000 (binary) and digits (multiclass) with M = 100
(its 1 797 rows leave ~11 per party at that M; at M = 1 000 a party would hold one row), and HAR features
from the UCI-HAPT signals (`mpdp.learning.shipped`, M = 1 000: ~6 rows per party, as the paper's Section 6.1). The
private methods run on the first split and redraw their noise in each trial; the non-private ones (batch,
indiv, and soft, avg, vote at 1/ε = 0) are averaged over 10 splits, as the paper does. Results come from the in-process
reference (the same code Charlie runs); sampled points are re-run over the wire (every role its own
process, mutual TLS, test mode for the seeded η) and must equal the reference exactly.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from launcher.common.experiment_plots import majority_line
from launcher.common.experiment_threads import single_blas_thread
from launcher.common.progress import steps
from mpdp.learning import datasets, models
from mpdp.protocols.hamm import baselines, reference
from mpdp.protocols.hamm.charlie import eta_source, train_and_release
from mpdp.protocols.hamm.parameters import DEFAULT_HONEST_FRACTION, HammParameters
from mpdp.protocols.hamm.release import Release
from mpdp.protocols.hamm.votes import vote_slots

PARTIES = {"a9a": 1000, "har": 1000, "digits": 100}
SPLITS = 10  # the paper: 10 trials (splits) for the non-private methods, 100 noise draws for the private ones
INVERSE_EPSILONS = [0.0, 0.1, 1.0, 10.0, 100.0]
AUX_FRACTION = 0.1
SCALING = "unit-rows"  # "features scaled into the unit ball", each row by itself (as Pathak's a9a experiment)
METHODS = ("batch", "soft", "avg", "vote", "indiv")
PRIVATE = ("soft", "avg", "vote")
# Figure 2 (activity recognition, M = 1 000, 6 classes): the paper's only figures quoted in its text.
PAPER_HAR = {"batch": 0.90, "indiv": 0.47, "vote at 1/ε = 0": 0.79, "soft at 1/ε = 0": 0.76,
             "avg at 1/ε = 0": 0.67}
KEY_ID_UNUSED = bytes(32)  # the reference needs no key; wire sessions use the deployment's


def _parameters(method: str, epsilon: float, regularization: float, classes: int, parties: int,
                aux: np.ndarray, key_id: bytes = KEY_ID_UNUSED) -> HammParameters:
    return HammParameters(method, epsilon, 1e-5, regularization, classes, parties, aux.shape[0], aux.shape[1],
                          False, False, DEFAULT_HONEST_FRACTION, key_id)


def _epsilon(inverse: float) -> float:
    return math.inf if inverse == 0 else 1 / inverse


def _summary(values: list[float]) -> dict:
    return {"mean": float(np.mean(values)), "std": float(np.std(values)), "trials": len(values)}


@functools.lru_cache(maxsize=4)
def _load(name: str, data_dir) -> datasets.Dataset:
    """Each split reads the same data set: read (for HAR, computed from the signals) once."""
    return datasets.load(name, data_dir=data_dir, scaling=SCALING)


class Setting:
    """One data set's split, the parties' local classifiers and their votes on X_aux."""

    def __init__(self, name: str, parties: int, data_dir, seed: int, regularization: float):
        self.dataset = _load(name, data_dir)
        self.parties, self.seed, self.regularization = parties, seed, regularization
        # The placement `mpdp up --seed S --aux-fraction 0.1 --scaling unit-rows` makes, so wire checks see the same data.
        split = datasets.split_for_teachers(self.dataset, parties, np.random.default_rng(seed),
                                            aux_fraction=AUX_FRACTION)
        self.parts, self.aux = split.teacher_parts, split.public_features
        self.test = (split.test_features, split.test_labels)
        classes = self.dataset.classes
        self.models, self.votes = [], []
        with steps(len(self.parts), f"{name}: M = {len(self.parts)} local classifiers trained and voting") as done:
            for x, y in self.parts:
                self.models.append(models.train("logistic-exact", x, y, classes))
                self.votes.append(vote_slots(self.models[-1].predict(self.aux), classes))
                done.advance()

    def counts(self) -> np.ndarray:
        return reference.counts(self.parameters("soft", math.inf), self.votes)

    def parameters(self, method: str, epsilon: float, key_id: bytes = KEY_ID_UNUSED) -> HammParameters:
        return _parameters(method, epsilon, self.regularization, self.dataset.classes, self.parties, self.aux, key_id)


def non_private(setting: Setting) -> dict[str, float]:
    """Every method without noise on one split: batch, indiv (mean local) and soft, avg, vote at 1/ε = 0."""
    classes, (test_x, test_y) = setting.dataset.classes, setting.test
    counts = setting.counts()
    values = {"batch": baselines.accuracy(baselines.batch(setting.parts, classes, setting.regularization), test_x, test_y),
              "indiv": baselines.indiv(setting.models, test_x, test_y)["mean"],
              "avg": baselines.accuracy(baselines.averaged(setting.models), test_x, test_y)}
    for method in ("soft", "vote"):
        trained = train_and_release(setting.parameters(method, math.inf), setting.aux, counts, setting.parties,
                                    random.Random(0)).trained
        values[method] = baselines.accuracy(trained, test_x, test_y)
    return values


def run_dataset(setting: Setting, inverse_epsilons: list[float], trials: int) -> dict:
    name, classes = setting.dataset.name, setting.dataset.classes
    test_x, test_y = setting.test
    started = time.perf_counter()
    batch = baselines.accuracy(baselines.batch(setting.parts, classes, setting.regularization), test_x, test_y)
    indiv = baselines.indiv(setting.models, test_x, test_y)
    counts = setting.counts()
    trained = {method: train_and_release(setting.parameters(method, math.inf), setting.aux, counts, setting.parties,
                                         random.Random(0)).trained for method in ("soft", "vote")}
    average = baselines.averaged(setting.models)
    points = []
    with steps(len(inverse_epsilons), f"{name}: 1/ε sweep") as done:
        for inverse in inverse_epsilons:
            epsilon = _epsilon(inverse)
            runs = 1 if inverse == 0 else trials
            point: dict[str, Any] = {"inverse_epsilon": inverse, "epsilon": None if inverse == 0 else epsilon}
            for method in PRIVATE:
                accuracies = []
                for trial in range(runs):
                    source = random.Random(f"mpdp/experiment/hamm/{setting.seed}/{name}/{method}/{inverse}/{trial}")
                    if method == "avg":
                        weights = baselines.avg_release(average, classes, setting.parties, setting.regularization,
                                                        epsilon, source)
                    else:
                        release = Release(setting.parameters(method, epsilon), setting.parties)
                        weights = trained[method] + release.sample(source).reshape(trained[method].shape)
                    accuracies.append(baselines.accuracy(weights, test_x, test_y))
                point[method] = _summary(accuracies)
            points.append(point)
            print(f"    {name} 1/ε = {inverse:g}: " + ", ".join(f"{m} {point[m]['mean']:.3f}" for m in PRIVATE),
                  file=sys.stderr, flush=True)
            done.advance(f"1/ε = {inverse:g}")
    sensitivities = {
        "vote": Release(setting.parameters("vote", 1.0), setting.parties).sensitivity,
        "soft": Release(setting.parameters("soft", 1.0), setting.parties).sensitivity,
        "avg": baselines.avg_sensitivity(classes, setting.parties, setting.regularization),
    }
    norms = {"vote": float(np.linalg.norm(trained["vote"])), "soft": float(np.linalg.norm(trained["soft"])),
             "avg": float(np.linalg.norm(average))}
    return {
        "dataset": name, "classes": classes, "dimension": setting.aux.shape[1], "parties": setting.parties,
        "aux_points": len(setting.aux), "private_rows": sum(len(y) for _, y in setting.parts),
        "rows_per_party": sum(len(y) for _, y in setting.parts) / setting.parties, "test_rows": len(test_y),
        "majority_class_rate": float(np.max(np.bincount(test_y)) / len(test_y)),
        "batch": batch, "indiv": indiv, "points": points,
        "sensitivities": sensitivities,
        "model_norms": norms,
        # E‖η‖ = D·Δ/ε: beside ‖w‖ it says where the private methods must fall to chance
        "expected_noise_norm_at_epsilon_1": {m: setting.aux.shape[1] * (1 if classes == 2 else classes) * delta
                                             for m, delta in sensitivities.items()},
        "seconds": time.perf_counter() - started,
    }


def wire_check(out: Path, setting: Setting, points: list[tuple[str, float]], bits: int,
               parties_per_process: int, ray_address: str | None = None) -> list[dict]:
    """Re-run (method, 1/ε) points over the wire on the same placement and compare w_p with the reference
    from the same η stream (the network's counts are the plain vote sums, so the reference uses them too).
    `ray_address` ("" for a local cluster): the role hosts run as Ray actors (launcher/deployment/ray_hosts.py)."""
    from launcher.common.client import load_client_data
    from launcher.deployment import processes
    from launcher.protocols.hamm.client import run_hamm_session
    from mpdp.cryptocore.paillier import keyfiles
    from mpdp.privacy.ledger import UNLIMITED

    run_dir = out / f"wire-{setting.dataset.name}"
    progress = f"  wire check on {setting.dataset.name}: M = {setting.parties} parties"
    print(f"{progress} in {math.ceil(setting.parties / parties_per_process)} processes, {bits}-bit keys; "
          "starting the deployment …", file=sys.stderr, flush=True)
    options: dict[str, Any] = dict(seed=setting.seed, model="logistic-exact", test_mode=True,
                                   aux_fraction=AUX_FRACTION, budget=UNLIMITED, single_operator=True,
                                   allow_unproven=True)  # a sweep of sessions, 1/ε = 0 (non-private) among them
    started = time.perf_counter()
    if ray_address is not None:
        from launcher.deployment import ray_hosts

        topology = ray_hosts.up(run_dir, ray_address or None, setting.parties, parties_per_process, bits,
                                setting.dataset, startup_timeout=3600, **options)
        stop = ray_hosts.down
    else:
        topology = processes.up(run_dir, setting.parties, bits, setting.dataset, parties_per_process=parties_per_process,
                                startup_timeout=3600, **options)
        stop = processes.down
    startup_s = time.perf_counter() - started
    checks = []
    try:
        client_data = load_client_data(processes.RunDirectory(run_dir).client_data)
        if not np.array_equal(client_data["public_features"], setting.aux):
            raise RuntimeError("the deployment's X_aux differs from the experiment's split")
        key_id = keyfiles.load_public_key(topology.public_key).key_id
        counts = setting.counts()
        for number, (method, inverse) in enumerate(points, start=1):
            # the deployment's c, as the client fills it (every party checks it against its topology)
            parameters = dataclasses.replace(setting.parameters(method, _epsilon(inverse), key_id),
                                             colluding=topology.colluding)
            started = time.perf_counter()
            report = asyncio.run(run_hamm_session(topology, client_data, parameters, noise_seed=number))
            expected = train_and_release(parameters, setting.aux, counts, setting.parties, eta_source(number))
            released = np.array(report["result"]["weights"]).reshape(expected.shape)
            difference = float(np.max(np.abs(released - expected.released)))
            checks.append({"dataset": setting.dataset.name, "method": method, "inverse_epsilon": inverse,
                           "parties": setting.parties, "key_bits": bits, "voters": report["result"]["voters"],
                           "max_abs_difference": difference,
                           "matches": bool(np.array_equal(released, expected.released)),
                           "test_accuracy": report["result"]["test_accuracy"],
                           "session_seconds": time.perf_counter() - started, "timing": report["timing"],
                           "startup_seconds": startup_s, "ray": ray_address is not None,
                           "messages": sum(row["messages"] for row in report["traffic"]),
                           "bytes": sum(row["request_bytes"] + row["response_bytes"] for row in report["traffic"])})
            print(f"    {method} 1/ε = {inverse:g}: max |w_p − reference| = {difference:.1e}",
                  file=sys.stderr, flush=True)
        if ray_address is not None and checks:  # each actor's server: resident and peak memory, its node
            checks[-1]["ray_hosts"] = ray_hosts.describe(run_dir)
    finally:
        stop(run_dir)
    return checks


@single_blas_thread
def run(out: Path, names: list[str], parties: int | None, data_dir, inverse_epsilons: list[float], trials: int,
        regularization: float, seed: int, wire_samples: int = 0, bits: int = 2048,
        parties_per_process: int = 250, splits: int = SPLITS, ray_address: str | None = None) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    report: dict[str, Any] = {
        "experiment": "hamm", "inverse_epsilons": inverse_epsilons, "lambda": regularization,
        "aux_fraction": AUX_FRACTION, "scaling": SCALING, "trials_private": trials, "seed": seed, "local_model": "logistic-exact",
        "mode": "in-process reference (Charlie's own code); private points on the first split, noise redrawn per "
                "trial; the non-private methods over `splits` splits (seeds seed, seed + 1, …)",
        "splits": splits,
        "bands": "±1 standard deviation over the trials",
        "paper_har_m1000": PAPER_HAR, "datasets": [], "wire_checks": [],
    }
    sampler = np.random.default_rng(seed)
    for name in names:
        count = parties or PARTIES.get(name, 100)
        print(f"  {name}: M = {count} parties; training local classifiers …", file=sys.stderr, flush=True)
        setting = Setting(name, count, data_dir, seed, regularization)
        result = run_dataset(setting, inverse_epsilons, trials)
        per_split = [non_private(setting)]
        for number in range(1, splits):
            per_split.append(non_private(Setting(name, count, data_dir, seed + number, regularization)))
            print(f"    {name} split {number + 1}/{splits}: " + ", ".join(f"{m} {v:.3f}" for m, v in per_split[-1].items()),
                  file=sys.stderr, flush=True)
        result["non_private_splits"] = {method: {**_summary([values[method] for values in per_split]),
                                                 "values": [values[method] for values in per_split]}
                                        for method in per_split[0]}
        report["datasets"].append(result)
        if wire_samples:
            candidates = [(method, inverse) for method in ("soft", "vote") for inverse in inverse_epsilons]
            chosen = sampler.choice(len(candidates), size=min(wire_samples, len(candidates)), replace=False)
            report["wire_checks"] += wire_check(out, setting, [candidates[i] for i in chosen], bits,
                                                parties_per_process, ray_address)
    report["seconds"] = time.perf_counter() - started
    report["plot"] = plot(report, out)
    (out / "hamm_report.json").write_text(json.dumps(report, indent=2))
    return report


def plot(report: dict, out: Path) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = report["datasets"]
    figure, axes = plt.subplots(1, len(results), figsize=(5.5 * len(results), 4.5), squeeze=False)
    for axis, result in zip(axes[0], results):
        positions = np.arange(len(result["points"]))
        over = result.get("non_private_splits", {})
        for method, style in (("batch", "-"), ("indiv", "--")):
            value = over[method] if method in over else {"mean": result[method] if method == "batch" else
                                                         result[method]["mean"], "std": 0.0, "trials": 1}
            axis.axhline(value["mean"], color="k", linestyle=style,
                         label=f"{method} (non-private; mean of {value['trials']} splits)")
            axis.axhspan(value["mean"] - value["std"], value["mean"] + value["std"], color="k", alpha=0.08)
        majority_line(axis, result["majority_class_rate"])
        for method, marker in (("soft", "o"), ("avg", "s"), ("vote", "^")):
            axis.errorbar(positions, [p[method]["mean"] for p in result["points"]],
                          yerr=[p[method]["std"] for p in result["points"]], marker=marker, capsize=3, label=method)
        axis.set_xticks(positions, [f"{p['inverse_epsilon']:g}" for p in result["points"]])
        axis.set_xlabel("privacy level 1/ε")
        axis.set_ylabel("test accuracy")
        axis.set_ylim(0, 1)
        axis.set_title(f"{result['dataset']}: M = {result['parties']}, {result['classes']} classes, "
                       f"~{result['rows_per_party']:.0f} rows per party", fontsize=9)
        axis.legend(fontsize=7, loc="lower left")
        # What a prediction sees: η·x on a unit row has std √(D + 1)·Δ/ε (docs/reproduction.md), against the
        # model's score, at most ‖w_s‖ and never above √(2 ln C/λ).
        weights = result["dimension"] * (1 if result["classes"] == 2 else result["classes"])
        score_noise = math.sqrt(weights + 1) * result["sensitivities"]["soft"]
        bound = math.sqrt(2 * math.log(result["classes"]) / report["lambda"])
        axis.text(0.98, 0.6, f"soft: noise on a class score, std √(D + 1)·Δ/ε:\n{score_noise / 10:.3g} at 1/ε = 0.1, "
                              f"{score_noise:.3g} at 1/ε = 1\nvs ‖w_s‖ = {result['model_norms']['soft']:.3g} "
                              f"(at most √(2 ln C/λ) = {bound:.0f})", transform=axis.transAxes, ha="right",
                  va="center", fontsize=7, bbox={"facecolor": "white", "edgecolor": "grey"})
    figure.suptitle(f"Hamm et al. (in-process reference; sampled points checked over the wire): λ = {report['lambda']}, "
                    f"{report['trials_private']} trials per private point (bars: ±1 std)", fontsize=10)
    figure.tight_layout()
    name = "hamm_accuracy.png"
    figure.savefig(out / name, dpi=110)
    plt.close(figure)
    return name


def accuracy_table(report: dict) -> str:
    lines = []
    for result in report["datasets"]:
        if "non_private_splits" in result:
            lines.append(f"{result['dataset']} non-private over {result['non_private_splits']['batch']['trials']} splits: "
                         + ", ".join(f"{m} {v['mean']:.3f} ± {v['std']:.3f}"
                                     for m, v in result["non_private_splits"].items()))
        lines.append(f"{result['dataset']} (M = {result['parties']}, {result['classes']} classes, "
                     f"N = {result['aux_points']}): batch {result['batch']:.3f}, indiv {result['indiv']['mean']:.3f}, "
                     f"majority class {result['majority_class_rate']:.3f}")
        lines.append("  at ε = 1, E‖η‖ = D·Δ/ε vs ‖w‖: " + ", ".join(
            f"{m} {result['expected_noise_norm_at_epsilon_1'][m]:.3g} vs {result['model_norms'][m]:.3g}"
            for m in PRIVATE))
        for point in result["points"]:
            lines.append(f"  1/ε = {point['inverse_epsilon']:<5g} " + "  ".join(
                f"{method} {point[method]['mean']:.3f} ± {point[method]['std']:.3f}" for method in PRIVATE))
    paper = ", ".join(f"{k} {v:.2f}" for k, v in PAPER_HAR.items())
    lines.append(f"paper (activity recognition, M = 1 000, 6 classes): {paper}")
    return "\n".join(lines)
