"""The data set options `up`, `prepare` and `demo` share, and the data set and local model they read."""

from __future__ import annotations

import argparse
from pathlib import Path


def load_dataset(args):
    from mpdp.learning import datasets, private_statistics

    dataset = datasets.load(args.dataset, label=args.label, data_dir=args.data_dir, scaling=args.scaling,
                            intercept=args.intercept, max_levels=args.max_levels, schema=args.schema,
                            statistics=private_statistics.options(getattr(args, "statistics_epsilon", None)))
    from launcher.common.data_report import print_lines

    print_lines(dataset)
    return dataset


def teacher_as_model(args) -> None:
    """`--teacher MODULE:CLASS`: every party's local model (DPPP's and Hamm's teachers) is that classifier,
    checked here (it imports and is a classifier) before any key is made."""
    if args.teacher is None:
        return
    if args.model:
        raise SystemExit("mpdp: error: give --teacher or --model, not both")
    from mpdp.learning.models import own_classifier

    try:
        own_classifier(args.teacher)
    except ValueError as error:
        raise SystemExit(f"mpdp: error: {error}") from None
    args.model = args.teacher


def add_dataset_options(parser) -> None:
    parser.add_argument("--dataset", default="breast-cancer",
                        help="breast-cancer, digits, mnist-5k, har (mpdp[experiments]), a9a, or a path to a CSV (with --label) or LIBSVM file")
    parser.add_argument("--label", help="label column of a CSV data set")
    parser.add_argument("--max-levels", type=int, default=100, metavar="N",
                        help="a categorical CSV column with more distinct values is an error")
    parser.add_argument("--intercept", action=argparse.BooleanOptionalAction, default=True,
                        help="a constant feature inside the unit ball, so every linear model (which fits none of its "
                             "own) gets an intercept; stated in the reports")
    parser.add_argument("--schema", type=Path, help="public per-column bounds of a CSV table (JSON; see "
                                                    "docs/data-and-metrics.md)")
    parser.add_argument("--statistics-epsilon", type=float, metavar="E",
                        help="ε of the statistics read from a CSV table's columns without a schema entry, under DP "
                             "and charged to every party's ledger (default 1; docs/data-and-metrics.md)")
    parser.add_argument("--data-dir", help="directory holding a9a (default: $MPDP_DATA_DIR)")
    parser.add_argument("--scaling", choices=["public", "standardise", "unit-rows"], default="public",
                        help="into the unit ball: public per-column bounds and each row on its own; or the papers' "
                             "standardised columns and one common factor, or each row to norm 1")
    parser.add_argument("--seed", type=int, help="seed of the data split (the split only; noise is always CSPRNG)")
    parser.add_argument("--split", default="even",
                        help="party data sizes: even, 15, 10 (a paper's splits; docs/reproduction.md) or comma-separated sizes; or "
                             "label-skew:α, a non-IID split (each class shared among the parties by a seeded "
                             "Dirichlet(α)); or column:NAME, a cross-silo split (each party the rows of one value or "
                             "range of the column; docs/data-and-metrics.md)")
    parser.add_argument("--aux-fraction", type=float, metavar="F",
                        help="with a curator: this fraction of the training rows becomes Charlie's public X_aux, the "
                             "rest goes to the parties, the remaining third to the test set (default: a third of the "
                             "rows, halved into public and test rows)")
