"""`mpdp verify REPORT`: re-check a stored session report offline from the transcript it carries, with the
checks of the protocol's own verifier (its registry entry's `verify`; docs/client-checks.md). Exit 0: every
check the report allows holds (the lines say which, and what could not be checked); 1: one does not."""

from __future__ import annotations

import json
from pathlib import Path

from launcher.registry import PROTOCOLS


class NotVerifiable(ValueError):
    """The file is not a session report any protocol's verifier takes."""


def verify_file(path: Path, ca_file: Path | None = None, public_key_file: Path | None = None,
                require_transcript: bool = False) -> list[str]:
    """The verifier's lines for the report at `path`; its VerifyFailed (a ValueError) if a check fails."""
    from mpdp.cryptocore import keyfiles

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
