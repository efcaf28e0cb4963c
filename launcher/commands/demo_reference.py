"""How often the demo's Pathak, DPPP, Hamm and Du results beat the majority class at the demo's settings: each through the
in-process reference its networked session equals (mpdp/protocols/<name>/reference.py), on the demo's split of the
demo's data, over many random splits and noise draws, cut on the public rows as the clients cut (docs/demo.md).

    python -m launcher.commands.demo_reference --draws 300 [any `mpdp demo` flag, e.g. --pathak-lambda 0.01]

Cheap (no key, no process): what the demo's settings were chosen on, and what tests/test_demo_settings.py checks."""

from __future__ import annotations

import argparse
import random
import sys
from types import SimpleNamespace

import numpy as np

PROTOCOLS = ("pathak", "dppp", "hamm", "du")
KEY_ID = bytes(32)  # the references never encrypt; the parameters still name a key


def demo_arguments(argv: list[str] | tuple[str, ...] = ()) -> argparse.Namespace:
    """`mpdp demo`'s namespace: every protocol's prefixed options at the demo's defaults, `argv` on top."""
    from launcher.cli import build_parser

    return build_parser("demo").parse_args(["demo", *argv])


def load_dataset(args: argparse.Namespace):
    """The demo's data set, read as `mpdp demo` reads it (without printing)."""
    from mpdp.learning import datasets, private_statistics

    return datasets.load(args.dataset, label=args.label, data_dir=args.data_dir, scaling=args.scaling,
                         intercept=args.intercept, max_levels=args.max_levels, schema=args.schema,
                         statistics=private_statistics.options(getattr(args, "statistics_epsilon", None)))


def layout(protocol, args: argparse.Namespace) -> tuple[int, int]:
    """(parties, c) of the deployment the demo runs `protocol` on: its own, or the shared one of --parties."""
    from launcher.commands.demo import _holds_a_quorum

    plan = protocol.demo_deployment
    if plan is None:
        return args.parties, 1
    colluding = 1 if _holds_a_quorum(plan.parties, plan.parties_per_process) else plan.parties_per_process
    return plan.parties, colluding


def deployment(protocol, args: argparse.Namespace, dataset, split_seed: int):
    """The demo's split for `protocol` at `split_seed`: (the split, the client's data, a stand-in topology with
    what the noise check reads: the parties and c)."""
    from launcher.deployment.processes import split_data

    parties, colluding = layout(protocol, args)
    split, client_data = split_data(dataset, parties, split_seed, args.split, args.aux_fraction)
    return split, client_data, SimpleNamespace(parties=[None] * parties, colluding=colluding)


def _scored(split, test_scores: np.ndarray, public_scores: np.ndarray) -> dict:
    from mpdp.learning import evaluation, threshold

    cut = threshold.on_public_rows(public_scores)  # the clients' rule: public rows only
    found = evaluation.metrics(split.test_labels, threshold.predict(test_scores, cut), test_scores)
    return {**found, "majority": evaluation.majority_rate(split.test_labels)}


def pathak_parameters(args: argparse.Namespace, parties: int, dimension: int):
    """As `run pathak` builds them from its options (its module is reached through the registry only)."""
    from mpdp.protocols.pathak.parameters import PathakParameters

    return PathakParameters(
        epsilon=args.epsilon, delta=args.delta, regularization=args.regularization, mechanism=args.mechanism,
        calibration=args.calibration, parties=parties, dimension=dimension, n_min=args.n_min,
        deadline_seconds=args.deadline, noise_source=args.noise_source,
        calibrate_to=args.calibrate_to or ("n_min" if args.noise_source == "distributed" else "n_1"))


def pathak(args: argparse.Namespace, split, draw: int) -> dict:
    from mpdp.protocols.pathak import reference

    chosen = pathak_parameters(args, len(split.teacher_parts), split.test_features.shape[1])
    w = reference.seeded_release(chosen, list(split.teacher_parts), draw + 1)  # the noise of noise_seed = draw + 1
    return _scored(split, split.test_features @ w, split.public_features @ w)


def hamm(args: argparse.Namespace, split, draw: int, colluding: int, model: str) -> dict:
    from mpdp.learning import models
    from mpdp.protocols.hamm import reference
    from mpdp.protocols.hamm.parameters import DEFAULT_HONEST_FRACTION, HammParameters

    aux, parties = split.public_features, len(split.teacher_parts)
    chosen = HammParameters(args.method, args.epsilon, args.delta, args.regularization, 2, parties, len(aux),
                            aux.shape[1], args.noisy_counts, args.protect_aux, DEFAULT_HONEST_FRACTION, KEY_ID,
                            args.count_noise, colluding=colluding)
    teachers = [models.train(model, x, y, 2) for x, y in split.teacher_parts]
    noise = None
    if chosen.noisy_counts:  # M shares Bin(N_i, ½) per slot add up to Bin(M·N_i, ½)
        rng = np.random.default_rng(draw)
        noise = [rng.binomial(parties * chosen.share_range, 0.5, size=(len(aux), 1))]
    _, outcome = reference.session(chosen, aux, teachers, random.Random(draw), noise)
    w = np.asarray(outcome.released).ravel()
    return _scored(split, split.test_features @ w, aux @ w)


def dppp(args: argparse.Namespace, split, draw: int) -> dict:
    """Each teacher's T models on T disjoint parts of its rows (party/teachers.py), their summed votes plus
    Bin(N_i, ½) shares, the student trained on the noisy labels as the client trains it."""
    from mpdp.learning import ensemble, evaluation, models
    from mpdp.privacy.binomial import BinomialCalibration
    from mpdp.protocols.dppp import reference
    from mpdp.protocols.dppp.parameters import DEFAULT_HONEST_FRACTION, DpppParameters

    queries = split.public_features[:min(args.queries, len(split.public_features))]
    classes = int(max(split.test_labels.max(), *(y.max() for _, y in split.teacher_parts))) + 1
    parameters = DpppParameters.with_minimal_noise(args.epsilon, args.delta, len(queries), classes,
                                                   len(split.teacher_parts), DEFAULT_HONEST_FRACTION, True, KEY_ID,
                                                   ensemble=args.ensemble)
    votes = [np.array([m.predict(queries) for m in ensemble.train(models.DEFAULT_TEACHER_MODEL, x, y, classes,
                                                                   args.ensemble)])
             for x, y in split.teacher_parts]
    calibration = parameters.calibration
    assert isinstance(calibration, BinomialCalibration)  # the demo's noise: binomial shares
    labels = reference.labels(reference.simulate_round(votes, classes, calibration.tosses_per_teacher,
                                                       np.random.default_rng(draw)))
    student = models.train(models.DEFAULT_STUDENT_MODEL, queries, labels)
    if len(student.classes_) < 2:  # one class for every row: as the client reports it
        predictions = np.full(len(split.test_labels), student.classes_[0])
        return {**evaluation.metrics(split.test_labels, predictions),
                "majority": evaluation.majority_rate(split.test_labels)}
    return _scored(split, student.decision_function(split.test_features),
                   student.decision_function(split.public_features))


def du(args: argparse.Namespace, split, draw: int) -> dict:
    from mpdp.protocols.du import reference
    from mpdp.protocols.du.objectives import augment
    from mpdp.protocols.du.parameters import DuParameters
    from mpdp.protocols.hamm.parameters import DEFAULT_HONEST_FRACTION

    parts = [(augment(x), y) for x, y in split.teacher_parts]
    chosen = DuParameters(args.method, args.epsilon, args.delta, args.rounds, args.tolerance, args.local_epochs,
                          args.learning_rate, args.regularization, len(parts), split.test_features.shape[1],
                          args.bound, False, DEFAULT_HONEST_FRACTION, KEY_ID, args.batch_size,
                          max(len(y) for _, y in parts))
    theta = reference.run(chosen, parts, draw + 1).released(chosen)
    return _scored(split, augment(split.test_features) @ theta, augment(split.public_features) @ theta)


def release(name: str, args: argparse.Namespace, dataset, split_seed: int, draw: int) -> dict:
    """One demo result of `name` (metrics and the majority rate) at one split and one noise draw."""
    from launcher.protocol import protocol_arguments
    from launcher.registry import PROTOCOLS

    protocol = PROTOCOLS[name]
    split, _, topology = deployment(protocol, args, dataset, split_seed)
    seen = protocol_arguments(args, protocol)
    if name == "hamm" and protocol.demo_deployment is not None:
        return hamm(seen, split, draw, topology.colluding, protocol.demo_deployment.model)
    return {"pathak": pathak, "dppp": dppp, "du": du}[name](seen, split, draw)


def distribution(name: str, args: argparse.Namespace, dataset, draws: int, first_seed: int = 0) -> dict:
    """`draws` results, each on its own split (seed first_seed + i) with its own noise draw."""
    found = [release(name, args, dataset, first_seed + i, 10_000 + first_seed + i) for i in range(draws)]
    accuracy = np.array([f["accuracy"] for f in found])
    margin = accuracy - np.array([f["majority"] for f in found])
    return {"draws": draws, "beats_majority": float(np.mean(margin > 0)), "accuracy_mean": float(accuracy.mean()),
            "accuracy_p5": float(np.percentile(accuracy, 5)), "accuracy_min": float(accuracy.min()),
            "balanced_mean": float(np.mean([f["balanced_accuracy"] for f in found])),
            "majority_mean": float(np.mean([f["majority"] for f in found])),
            "margin_mean": float(margin.mean()), "margin_p5": float(np.percentile(margin, 5))}


def line(name: str, figures: dict) -> str:
    return (f"{name}: {figures['draws']} draws, beats the majority class in {figures['beats_majority']:.1%}; accuracy "
            f"mean {figures['accuracy_mean']:.1%} (5th percentile {figures['accuracy_p5']:.1%}, min "
            f"{figures['accuracy_min']:.1%}), balanced {figures['balanced_mean']:.1%}; majority "
            f"{figures['majority_mean']:.1%}; margin mean {100 * figures['margin_mean']:+.1f} points, 5th "
            f"percentile {100 * figures['margin_p5']:+.1f}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m launcher.commands.demo_reference", description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=100, help="splits, one noise draw each")
    parser.add_argument("--protocols", default=",".join(PROTOCOLS))
    own, rest = parser.parse_known_args(argv)
    args = demo_arguments(rest)
    dataset = load_dataset(args)
    for name in own.protocols.split(","):
        print(line(name, distribution(name, args, dataset, own.draws)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
