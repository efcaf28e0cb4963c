"""The `mpdp` command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cryptocore.paillier import DEFAULT_KEY_BITS, MIN_KEY_BITS


def _key_bits(value: str) -> int:
    bits = int(value)
    if bits < MIN_KEY_BITS or bits % 2:
        raise argparse.ArgumentTypeError(f"key size must be an even number of bits ≥ {MIN_KEY_BITS}")
    return bits


def _warn_small_key(bits: int) -> None:
    if bits < DEFAULT_KEY_BITS:
        print(f"warning: {bits}-bit keys are for tests and quick demos only; use {DEFAULT_KEY_BITS}.", file=sys.stderr)


def _write_json(path: Path | None, report: dict) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2))
        print(f"report written to {path}")


def _bench(args) -> int:
    from launcher import bench_crypto

    _warn_small_key(args.bits)
    report = bench_crypto.run(args.bits, args.repeat)
    print(bench_crypto.summary(report))
    _write_json(args.json, report)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mpdp", description="Privacy-preserving multiparty learning over gRPC")
    commands = parser.add_subparsers(dest="command", required=True)

    bench = commands.add_parser("bench", help="measure costs and print figures")
    targets = bench.add_subparsers(dest="target", required=True)
    crypto = targets.add_parser("crypto", help="the cryptographic core")
    crypto.add_argument("--bits", type=_key_bits, default=DEFAULT_KEY_BITS, help="modulus size (default 2048)")
    crypto.add_argument("--repeat", type=int, default=20, help="calls per timed operation")
    crypto.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    crypto.set_defaults(handler=_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
