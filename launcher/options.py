"""Argument types and warnings every command shares."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cryptocore.key_sizes import DEFAULT_KEY_BITS, MIN_KEY_BITS


def key_bits(value: str) -> int:
    bits = int(value)
    if bits < MIN_KEY_BITS or bits % 2:
        raise argparse.ArgumentTypeError(f"key size must be an even number of bits ≥ {MIN_KEY_BITS}")
    return bits


def warn_small_key(bits: int) -> None:
    if bits < DEFAULT_KEY_BITS:
        print(f"warning: {bits}-bit keys are for tests and quick demos only; use {DEFAULT_KEY_BITS}.", file=sys.stderr)


def write_json(path: Path | None, report: dict) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2))
        print(f"report written to {path}")
