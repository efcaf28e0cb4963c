"""`dppp`'s release in `mpdp demo`'s reference (launcher/commands/demo_reference.py): the in-process reference its
networked session equals (mpdp/protocols/dppp/reference.py), at the demo's options, on one split and one noise
draw, scored as the client scores it."""

from __future__ import annotations

import argparse

import numpy as np

from launcher.common.reference_scores import KEY_ID, scored


def release(args: argparse.Namespace, split, draw: int, colluding: int, model: str | None) -> dict:
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
    return scored(split, student.decision_function(split.test_features),
                   student.decision_function(split.public_features))
