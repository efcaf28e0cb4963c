"""`--format json` on every command: one JSON object on standard output with a `success` key and the report
(a session's report, or what the command printed) or the error message; human text goes to standard error."""

from __future__ import annotations

import contextlib
import io
import json
import sys

FLAG = "--format"
ERROR_PREFIX = "mpdp: error: "


def parse(parser, argv: list[str]):
    """argparse's own refusals (an unknown option, a bad value) as an answer too: None and the answer printed."""
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            return parser.parse_args(argv)
    except SystemExit as stop:
        if stop.code == 0:  # --help
            raise
        lines = errors.getvalue().strip().splitlines()
        print(errors.getvalue(), end="", file=sys.stderr)
        message = lines[-1] if lines else "bad arguments"
        json.dump({"success": False, "error": message.split(": error: ", 1)[-1]}, sys.stdout, indent=2)
        print()
        return None


def requested(argv: list[str]) -> tuple[bool, list[str]]:
    """Whether `--format json` was given, and argv without it (`--format text` is the default and removed too)."""
    rest, wanted = [], False
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == FLAG and index + 1 < len(argv) and argv[index + 1] in ("json", "text"):
            wanted = argv[index + 1] == "json"
            index += 2
            continue
        if word.startswith(FLAG + "=") and word.split("=", 1)[1] in ("json", "text"):
            wanted = word.split("=", 1)[1] == "json"
            index += 1
            continue
        rest.append(word)
        index += 1
    return wanted, rest


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
    json.dump(answer, sys.stdout, indent=2, default=str)
    print()
    return code if answer["success"] else 2
