"""Options several commands share about a deployment: which running one a session uses, how its key is made, each party's privacy budget, test faults."""

from __future__ import annotations

import argparse
from pathlib import Path

from launcher.common.options import DEFAULT_RUN_DIR


def faults(values: list[str]) -> dict[int, str]:
    faults = {}
    for value in values or []:
        number, _, fault = value.partition("=")
        faults[int(number)] = fault
    return faults


def budget(text: str):
    from mpdp.privacy.ledger import Budget

    try:
        return Budget.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_budget_option(parser) -> None:
    parser.add_argument("--budget", type=budget, metavar="ε,δ",
                        help="each party's privacy budget for its data set, composed over every session it takes "
                             "part in (its ledger is a file next to the data); a session that would exceed it is "
                             "refused. Default: 20,2e-5; `inf` for no limit (spending still recorded)")
    parser.add_argument("--allow-unproven", action="store_true",
                        help="the parties take mechanisms without a proven ε (the papers' own calibrations: "
                             "OFPA/OFAA, laplace-paper; non-private runs); refused otherwise")


def keygen_method(args, one_process_decrypts: bool = False) -> str:
    """--keygen, or the default for this many parties and this layout (launcher.deployment.keygen.default_method)."""
    from launcher.deployment.keygen import default_method

    return args.keygen or default_method(args.parties, one_process_decrypts)


def add_keygen_method_option(parser, deferred: bool = False, default: str | None = None) -> None:
    from launcher.deployment.keygen import DEFERRED, METHODS

    parser.add_argument("--keygen", choices=METHODS + ((DEFERRED,) if deferred else ()), default=default,
                        help="distributed: the key holders generate the key among themselves and no process ever "
                             "holds it (about a minute of CPU at 2048 bits among 5; docs/distributed-keygen.md); "
                             "dealer: one process deals the shares (seconds; tests). "
                             + ("default: dealer" if default else "default: distributed with 3 or more parties, "
                                "dealer with 2, and dealer where one process of `up --single-operator` would "
                                "hold enough shares to decrypt alone")
                             + ("; deferred: no key yet, the holders' own `serve party --keygen-only --once` "
                                "processes make it (compose)" if deferred else ""))


def add_deployment_options(parser) -> None:
    """Which running deployment a session uses, and what it must hold."""
    parser.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR)
    parser.add_argument("--topology", type=Path, help="default: the run directory's")
    parser.add_argument("--client-data", type=Path, help="public and test data (default: the run directory's)")
    parser.add_argument("--dataset", help="must name the data set the topology was started with")
    parser.add_argument("--split", help="must name the split the topology was started with")
    parser.add_argument("--parties", "--teachers", dest="parties", type=int,
                        help="must equal the topology's number of parties")
