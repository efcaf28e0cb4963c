"""`du`'s release in `mpdp demo`'s reference (launcher/commands/demo_reference.py): the in-process reference its
networked session equals (mpdp/protocols/du/reference.py), at the demo's options, on one split and one noise
draw, scored as the client scores it."""

from __future__ import annotations

import argparse

from launcher.common.reference_scores import KEY_ID, scored


def release(args: argparse.Namespace, split, draw: int, colluding: int, model: str | None) -> dict:
    from mpdp.protocols.du import reference
    from mpdp.protocols.du.objectives import augment
    from mpdp.protocols.du.parameters import DEFAULT_HONEST_FRACTION, DuParameters

    parts = [(augment(x), y) for x, y in split.teacher_parts]
    chosen = DuParameters(args.method, args.epsilon, args.delta, args.rounds, args.tolerance, args.local_epochs,
                          args.learning_rate, args.regularization, len(parts), split.test_features.shape[1],
                          args.bound, False, DEFAULT_HONEST_FRACTION, KEY_ID, args.batch_size,
                          max(len(y) for _, y in parts))
    theta = reference.run(chosen, parts, draw + 1).released(chosen)
    return scored(split, augment(split.test_features) @ theta, augment(split.public_features) @ theta)
