"""`pathak`'s release in `mpdp demo`'s reference (launcher/commands/demo_reference.py): the in-process reference its
networked session equals (mpdp/protocols/pathak/reference.py), at the demo's options, on one split and one noise
draw, scored as the client scores it."""

from __future__ import annotations

import argparse

from launcher.common.reference_scores import scored


def reference_parameters(args: argparse.Namespace, parties: int, dimension: int):
    """As `run pathak` builds them from its options."""
    from mpdp.protocols.pathak.parameters import PathakParameters

    return PathakParameters(
        epsilon=args.epsilon, delta=args.delta, regularization=args.regularization, mechanism=args.mechanism,
        calibration=args.calibration, parties=parties, dimension=dimension, n_min=args.n_min,
        deadline_seconds=args.deadline, noise_source=args.noise_source,
        calibrate_to=args.calibrate_to or ("n_min" if args.noise_source == "distributed" else "n_1"))


def release(args: argparse.Namespace, split, draw: int, colluding: int, model: str | None) -> dict:
    from mpdp.protocols.pathak import reference

    chosen = reference_parameters(args, len(split.teacher_parts), split.test_features.shape[1])
    w = reference.seeded_release(chosen, list(split.teacher_parts), draw + 1)  # the noise of noise_seed = draw + 1
    return scored(split, split.test_features @ w, split.public_features @ w)
