"""How often the demo's results beat the majority class at the demo's settings: each protocol's through the
in-process reference its networked session equals (its registry entry's `demo_reference`), on the demo's split of the
demo's data, over many random splits and noise draws, cut on the public rows as the clients cut (docs/demo.md).

    python -m launcher.commands.demo_reference --draws 300 [any `mpdp demo` flag, e.g. --pathak-lambda 0.01]

Cheap (no key, no process): what the demo's settings were chosen on, and what tests/test_demo_settings.py checks."""

from __future__ import annotations

import argparse
import sys
from types import SimpleNamespace

import numpy as np


def protocols() -> list[str]:
    """The protocols whose registry entry has a demo reference, in registry order."""
    from launcher.registry import PROTOCOLS

    return [name for name, protocol in PROTOCOLS.items() if protocol.demo_reference is not None]


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


def release(name: str, args: argparse.Namespace, dataset, split_seed: int, draw: int) -> dict:
    """One demo result of `name` (metrics and the majority rate) at one split and one noise draw."""
    from launcher.protocol import protocol_arguments
    from launcher.registry import PROTOCOLS

    protocol = PROTOCOLS[name]
    if protocol.demo_reference is None:
        raise ValueError(f"{name} has no in-process demo reference; of {', '.join(protocols())}")
    split, _, topology = deployment(protocol, args, dataset, split_seed)
    seen = protocol_arguments(args, protocol)
    model = protocol.demo_deployment.model if protocol.demo_deployment is not None else None
    return protocol.demo_reference(seen, split, draw, topology.colluding, model)


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
    parser.add_argument("--protocols", default=",".join(protocols()))
    own, rest = parser.parse_known_args(argv)
    args = demo_arguments(rest)
    dataset = load_dataset(args)
    for name in own.protocols.split(","):
        print(line(name, distribution(name, args, dataset, own.draws)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
