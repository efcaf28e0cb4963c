"""`mpdp experiment`: reproduce a paper's comparison (each protocol's experiment of its registry entry), every one
of them (`all`, launcher/commands/experiment_all.py) or docs/reproduction.md's tables (`table`)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from launcher.common import run_config


def add_command(commands) -> None:
    """`mpdp experiment <protocol> | all | table`."""
    from launcher.registry import PROTOCOLS

    experiment = commands.add_parser("experiment", help="reproduce a paper's comparison; JSON report and PNG plots")
    experiments = experiment.add_subparsers(dest="experiment", required=True)
    for protocol in PROTOCOLS.values():
        if protocol.experiment is not None:
            reproduce = experiments.add_parser(protocol.name, help=protocol.experiment.help)
            for option in protocol.experiment.options():
                option.add_to(reproduce)
            run_config.add_option(reproduce)
            reproduce.set_defaults(handler=protocol.experiment.run)
    every = experiments.add_parser("all", help="every experiment into OUT/<protocol>/, each with a README.md")
    every.add_argument("--out", type=Path, required=True)
    every.add_argument("--data-dir", help="directory holding a9a (default: $MPDP_DATA_DIR)")
    every.add_argument("--quick", action="store_true", help="tiny sizes: checks the files, not a result")
    run_config.add_option(every)
    every.set_defaults(handler=run_all)
    table = experiments.add_parser("table", help="docs/reproduction.md's tables from the stored JSON (check, "
                                                 "--write, --summary)")
    from launcher.commands import experiment_table

    experiment_table.add_arguments(table)
    table.set_defaults(handler=experiment_table.run)


def _parser() -> argparse.ArgumentParser:
    """`mpdp experiment …` as the command line parses it."""
    from launcher.common import json_output
    from launcher.common.options import show_defaults

    parser = json_output.Parser(prog="mpdp")
    add_command(parser.add_subparsers(dest="command", required=True))
    json_output.add_option(parser)
    show_defaults(parser)
    return parser


def run_all(args: argparse.Namespace) -> int:
    """`mpdp experiment all`: every experiment of the registry, each parsed as `mpdp experiment <protocol>`."""
    from launcher.commands.experiment_all import plan, write_readme
    from launcher.registry import PROTOCOLS

    failures = []
    for protocol, arguments in plan(args.quick, args.data_dir).items():
        if PROTOCOLS[protocol].experiment is None:
            continue
        directory = args.out / protocol
        print(f"== mpdp experiment {protocol} {shlex.join(arguments)}", file=sys.stderr, flush=True)
        parsed = _parser().parse_args(["experiment", protocol, "--out", str(directory), *arguments])
        status = parsed.handler(parsed)
        if status:
            failures.append(protocol)
        files = [path.name for path in directory.iterdir() if path.suffix in (".json", ".png")]
        write_readme(directory, protocol, arguments, files, "Tiny sizes (`--quick`): a smoke test, not a result."
                     if args.quick else "")
    if failures:
        print(f"mpdp: experiments that reported a failure: {', '.join(failures)}", file=sys.stderr)
    elif not args.quick:
        print(f"then `mpdp experiment table --results {args.out} --write` brings docs/reproduction.md's tables to "
              "these results", file=sys.stderr)
    return 1 if failures else 0
