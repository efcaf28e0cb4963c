"""`--format json` on every command (an ordinary option): one JSON object on standard output with a `success` key and the report
(a session's report, or what the command printed) or the error message; human text goes to standard error."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys

FORMATS = ("text", "json")
ERROR_PREFIX = "mpdp: error: "


class Refused(SystemExit):
    """argparse's refusal of the command line (an unknown option, a bad value): the exit argparse makes (status 2,
    the usage and the error on standard error), carrying its message, so that `main` also answers it as JSON."""

    def __init__(self, message: str):
        super().__init__(2)
        self.message = message

    def __str__(self) -> str:
        return self.message


class Parser(argparse.ArgumentParser):
    """The `mpdp` parser (every sub-parser is of the same class): its refusals raise `Refused`."""

    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise Refused(message)


def add_option(parser: argparse.ArgumentParser) -> None:
    """`--format text|json` on `parser` and on every command under it that has no `--format` of its own (`trace`'s
    chooses its picture: there, `mpdp --format json trace …`). The root's default is text; a command's option
    has no default, so that it overrides the root's only when given."""
    root = True
    pending = [parser]
    while pending:
        current = pending.pop()
        if not any("--format" in action.option_strings for action in current._actions):
            current.add_argument("--format", choices=FORMATS, default="text" if root else argparse.SUPPRESS,
                                 help="json: one JSON object on standard output (`success`, then the report, the "
                                      "output or the error); human text goes to standard error")
        root = False
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending += list(dict.fromkeys(action.choices.values()))


def wanted(argv: list[str]) -> bool:
    """Whether a command line argparse refused asked for JSON (what its own parse would have found)."""
    finder = argparse.ArgumentParser(add_help=False)
    finder.add_argument("--format")
    return finder.parse_known_args(argv)[0].format == "json"


def command_of(argv: list[str]) -> str | None:
    """The command a command line names: its first word that is neither an option nor the root's `--format`'s
    value (`mpdp --format json compose …`)."""
    words = iter(argv)
    for word in words:
        if word == "--format":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def refusal(message: str) -> int:
    json.dump({"success": False, "error": message}, sys.stdout, indent=2)
    print()
    return 2


def plain(value):
    """`value` as JSON has it all the way down: NaN and ±∞ (an undefined AUC, an unlimited budget) as null,
    NumPy numbers and arrays as numbers and lists, tuples as lists, anything else (a path) as its text."""
    import math

    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if hasattr(value, "tolist"):  # NumPy
        return plain(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def run(handler, args, user_error) -> int:
    """The handler with its printed text captured; its report (if it left one on `args.json_report`) or that
    text in the answer."""
    captured = io.StringIO()
    answer: dict
    code = 2
    try:
        with contextlib.redirect_stdout(captured):
            code = handler(args)
        answer = {"success": code == 0}
        report = getattr(args, "json_report", None)
        if report is not None:
            answer["report"] = report
        else:
            answer["output"] = captured.getvalue()
    except SystemExit as stop:  # a handler's one-line refusal (`raise SystemExit("mpdp: error: …")`)
        if not isinstance(stop.code, str):
            raise
        answer = {"success": False, "error": stop.code.removeprefix(ERROR_PREFIX)}
    except Exception as error:
        message = user_error(error)
        if message is None:
            raise
        answer = {"success": False, "error": message}
    print(captured.getvalue(), end="", file=sys.stderr)
    json.dump(plain(answer), sys.stdout, indent=2, allow_nan=False)
    print()
    return code if answer["success"] else 2
