"""`mpdp verify REPORT`: re-check a stored session report offline from the transcript it carries, with the
checks of the protocol's own verifier (its registry entry's `verify`; docs/client-checks.md). Exit 0: every
check the report allows holds (the lines say which, and what could not be checked); 1: one does not."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from launcher.registry import PROTOCOLS


class NotVerifiable(ValueError):
    """The file is not a session report any protocol's verifier takes."""


def verify_file(path: Path, ca_file: Path | None = None, public_key_file: Path | None = None,
                require_transcript: bool = False) -> list[str]:
    """The verifier's lines for the report at `path`; its VerifyFailed (a ValueError) if a check fails."""
    from mpdp.cryptocore.paillier import keyfiles

    report = json.loads(Path(path).read_text())
    name = report.get("protocol") if isinstance(report, dict) and "session_id" in report else None
    protocol = PROTOCOLS.get(name) if isinstance(name, str) else None
    if protocol is None:
        raise NotVerifiable(f"{path} is not a session report (no session of a known protocol named in it)")
    if protocol.verify is None:
        raise NotVerifiable(f"{path}: the {name} protocol has no transcript verifier")
    if require_transcript and "transcript" not in report:
        raise NotVerifiable(f"{path} carries no transcript (--require-transcript)")
    ca = Path(ca_file).read_bytes() if ca_file is not None else None
    pin = keyfiles.load_public_key(public_key_file) if public_key_file is not None else None
    return protocol.verify(report, ca, pin)


def summary(path: Path, lines: list[str], complete: bool = True) -> str:
    verdict = "verified" if complete else "consistent as far as it can be checked without a transcript"
    return "\n".join([f"{path}: {verdict}", *(f"  {line}" for line in lines)])


def has_transcript(path: Path) -> bool:
    return "transcript" in json.loads(Path(path).read_text())


def add_command(commands) -> None:
    """`mpdp verify`: its options."""
    verify = commands.add_parser("verify", help="re-check a stored session report offline from its transcript: "
                                 "signatures, proofs, C, the combination, labels, ε and message counts, as far as the "
                                 "protocol's report may carry them (it says what it cannot check; exit 1 if any "
                                 "does not hold)")
    verify.add_argument("report", type=Path, help="a session report (`mpdp run … --json`)")
    verify.add_argument("--ca", type=Path, help="the deployment CA's certificate to trust (default: the one the "
                        "transcript names, whose fingerprint is printed)")
    verify.add_argument("--public-key", type=Path, help="the threshold public key to trust (default: the "
                        "transcript's, whose id is printed)")
    verify.add_argument("--require-transcript", action="store_true",
                        help="fail on a report without a transcript instead of checking its consistency alone")
    verify.set_defaults(handler=command)


def command(args) -> int:
    try:
        lines = verify_file(args.report, args.ca, args.public_key, args.require_transcript)
    except NotVerifiable:
        raise  # a user's mistake: one line, exit 2
    except ValueError as failed:  # the report does not hold up
        print(f"{args.report}: does not verify: {failed}", file=sys.stderr)
        return 1
    print(summary(args.report, lines, has_transcript(args.report)))
    return 0
