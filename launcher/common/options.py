"""Argument types and warnings every command shares."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mpdp.cryptocore.keys.key_sizes import DEFAULT_KEY_BITS, MIN_KEY_BITS

DEFAULT_RUN_DIR = Path(".mpdp-run")  # where `mpdp up` keeps a deployment unless --run-dir names another


def key_bits(value: str) -> int:
    bits = int(value)
    if bits < MIN_KEY_BITS or bits % 2:
        raise argparse.ArgumentTypeError(f"key size must be an even number of bits ≥ {MIN_KEY_BITS}")
    return bits


def warn_small_key(bits: int) -> None:
    if bits < DEFAULT_KEY_BITS:
        print(f"warning: {bits}-bit keys are for tests and quick demos only; use {DEFAULT_KEY_BITS}.", file=sys.stderr)


def to_stdout(path: Path | None) -> bool:
    """`--report -` / `--json -`: the JSON goes to standard output (and the summary to standard error)."""
    return path is not None and str(path) == "-"


def print_summary(text: str, path: Path | None) -> None:
    print(text, file=sys.stderr if to_stdout(path) else sys.stdout)


def write_json(path: Path | None, report: dict) -> None:
    import json  # here: `mpdp health` never writes JSON

    if to_stdout(path):
        json.dump(report, sys.stdout, indent=2, default=str)
        print()
        return
    if path is not None:
        import os

        from launcher.deployment.bundles import open_private

        path.parent.mkdir(parents=True, exist_ok=True)
        with os.fdopen(open_private(path, append=False), "w") as handle:  # 0600: it holds the evaluator's view
            handle.write(json.dumps(report, indent=2))
        print(f"report written to {path}")


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """`--help` states every option's default, unless its help already does or there is none to state."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (not action.option_strings or action.default in (None, False, argparse.SUPPRESS)
                or "default" in text.lower()):
            return text
        return f"{text} (default: %(default)s)".lstrip()


def show_defaults(parser: argparse.ArgumentParser) -> None:
    """Every parser and sub-parser under `parser` states its defaults in `--help`."""
    parser.formatter_class = DefaultsHelpFormatter
    for action in parser._actions:
        if action.help is None and action.option_strings:  # argparse prints nothing for an option without help
            stated = [] if action.choices is None else ["one of %(choices)s"]
            if action.default not in (None, False, argparse.SUPPRESS):
                stated.append("default: %(default)s")
            action.help = "; ".join(stated) or None
        if isinstance(action, argparse._SubParsersAction):
            for child in set(action.choices.values()):
                show_defaults(child)
