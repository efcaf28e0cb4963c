"""`mpdp compose`: the docker-compose file for K parties."""

from __future__ import annotations

from pathlib import Path

from launcher.common.deployment_options import keygen_method
from launcher.common.options import key_bits


def command(args) -> int:
    from launcher.deployment.compose import render

    text = render(args.parties, keygen_method(args), args.bits)
    if args.out:
        args.out.write_text(text)
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return 0


def add_command(commands) -> None:
    compose = commands.add_parser("compose", help="write the docker-compose file for K parties")
    compose.add_argument("--parties", type=int, default=5)
    compose.add_argument("--out", type=Path, help="default: standard output")
    compose.add_argument("--keygen", choices=("dealer", "distributed"),
                         help="distributed: each key holder's container runs the key generation and writes only "
                              "its own share (default with 3 or more parties); dealer: the one-shot prepare service "
                              "deals the key (default with 2)")
    compose.add_argument("--bits", type=key_bits, help="key size (default: prepare's)")
    compose.set_defaults(handler=command)
