"""The `mpdp` command line: the command table, parsing and the shared error handling. Each command's options and
what it does are one module of launcher/commands/, imported only when its command is asked for."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from launcher.common import run_config
from launcher.common.options import show_defaults

# Each command and the module of launcher/commands/ that adds its parser (`add_command`) and handles it.
COMMANDS = {
    "run": "run",
    "demo": "demo",
    "up": "up",
    "down": "down",
    "ps": "ps",
    "prepare": "prepare",
    "serve": "serve",
    "health": "health",
    "compose": "compose",
    "open-keygen": "open_keygen",
    "keygen": "keygen",
    "budget": "budget",
    "trace": "trace",
    "report": "html_report",
    "audit": "audit",
    "verify": "verify",
    "export": "export",
    "experiment": "experiment",
    "bench": "bench",
    "predict": "predict",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of `command` alone when it names one, else (`mpdp --help`, a mistyped command) every
    command's. One command's parser is all a call needs: `mpdp health`, run every 10 s by each container's
    health check, neither builds the others nor imports the protocols' packages, which run, demo and
    experiment do."""
    from launcher.common import json_output

    parser = json_output.Parser(prog="mpdp", description="Privacy-preserving multiparty learning over gRPC")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        if command not in COMMANDS or command == name:
            importlib.import_module(f"launcher.commands.{module}").add_command(commands)
    json_output.add_option(parser)
    show_defaults(parser)
    return parser


def _user_error(error: Exception) -> str | None:
    """The one line a user's mistake deserves, or None for a bug (which keeps its traceback)."""
    from launcher.common.errors import CeremonyError, StartupError
    from mpdp.cryptocore.errors import CryptoError
    from mpdp.sessions.errors import ProtocolError

    grpc = sys.modules.get("grpc")
    if grpc is not None and isinstance(error, grpc.RpcError) and hasattr(error, "code"):
        from party.resources import REFUSED

        hint = " (are the roles running? `mpdp ps` lists them, `mpdp up` starts them)" \
            if error.code() == grpc.StatusCode.UNAVAILABLE else ""
        if REFUSED in (error.details() or ""):
            # A party tells the opener nothing more; its operator can see why.
            hint = (" (a party refuses a session over its privacy budget, or a mechanism it does not accept; "
                    "`mpdp budget` shows what each has spent, its log says why)")
        return f"{error.code().name}: {error.details()}{hint}"
    if isinstance(error, (OSError, CryptoError, StartupError, CeremonyError, ProtocolError, ValueError)):
        return str(error)
    return None


def main(argv: list[str] | None = None) -> int:
    from launcher.common import json_output

    argv = sys.argv[1:] if argv is None else argv
    os.umask(0o077)  # every file a role or the launcher writes (logs, ledgers, reports) is its owner's alone
    command = json_output.command_of(argv)
    try:
        args = run_config.parse(build_parser(command), argv)
    except (json_output.Refused, run_config.ConfigError) as refused:
        if isinstance(refused, run_config.ConfigError):  # one line: a usage would hide which setting is wrong
            print(f"mpdp: error: {refused}", file=sys.stderr)
        return json_output.refusal(str(refused)) if json_output.wanted(argv) else 2
    if command in ("run", "demo") and os.environ.get("OTEL_TRACES_EXPORTER"):
        from mpdp.observe.role import observe_client

        try:
            observe_client()  # the client's calls as the root spans of their traces (docs/observe.md)
        except ValueError as error:
            print(f"mpdp: error: {error}", file=sys.stderr)
            return 2
    if args.format == "json":
        return json_output.run(args.handler, args, _user_error)
    try:
        return args.handler(args)
    except KeyboardInterrupt:  # SIGINT, or SIGTERM in a foreground run: what it started is already stopped
        print("mpdp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        if not _reader_gone(sys.stdout):
            raise
        # the reader of our output left (`mpdp verify R | head`): stop quietly, as a command killed by SIGPIPE
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush would complain again
        return 128 + 13
    except Exception as error:
        message = _user_error(error)
        if message is None or os.environ.get("MPDP_DEBUG"):
            raise
        hint = "; pass --force to replace them" if isinstance(error, FileExistsError) and hasattr(args, "force") else ""
        print(f"mpdp: error: {message}{hint}", file=sys.stderr)
        return 2


def _reader_gone(stream) -> bool:
    """Whether `stream` is a pipe whose reading end is closed (poll reports an error on it): a broken pipe of
    the user's shell, not one inside the command."""
    import select

    try:
        poller = select.poll()
        poller.register(stream.fileno(), 0)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


if __name__ == "__main__":
    sys.exit(main())
