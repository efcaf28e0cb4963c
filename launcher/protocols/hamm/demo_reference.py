"""`hamm`'s release in `mpdp demo`'s reference (launcher/commands/demo_reference.py): the in-process reference its
networked session equals (mpdp/protocols/hamm/reference.py), at the demo's options, on one split and one noise
draw, scored as the client scores it."""

from __future__ import annotations

import argparse
import random

import numpy as np

from launcher.common.reference_scores import KEY_ID, scored


def release(args: argparse.Namespace, split, draw: int, colluding: int, model: str | None) -> dict:
    """On the demo's own deployment: c and the teachers' model are its."""
    assert model is not None
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
    return scored(split, split.test_features @ w, aux @ w)
