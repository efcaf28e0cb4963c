"""A Pathak session's parameters from its options (`mpdp run pathak`'s, the check's and the charge's alike)."""

from __future__ import annotations

import argparse


def parameters(args: argparse.Namespace, parties: int, dimension: int):
    from mpdp.protocols.pathak.parameters import PathakParameters

    return PathakParameters(
        epsilon=args.epsilon, delta=args.delta, regularization=args.regularization, mechanism=args.mechanism,
        calibration=args.calibration, parties=parties, dimension=dimension, n_min=args.n_min,
        deadline_seconds=args.deadline, noise_source=args.noise_source,
        calibrate_to=args.calibrate_to or ("n_min" if args.noise_source == "distributed" else "n_1"),
    )
