"""`mpdp compose`: the docker-compose file for K parties."""

from __future__ import annotations

import sys
from pathlib import Path

from launcher.common.deployment_options import keygen_method
from launcher.common.options import key_bits


def command(args) -> int:
    from launcher.deployment import compose_network, network
    from launcher.deployment.compose import render

    profile = network.profile_of(args)
    linked = profile if profile.emulated else None  # loopback's links need no relay: the plain file
    if linked is not None and not args.out:
        print(f"mpdp: error: --network writes the link table {compose_network.LINKS_FILE} beside the compose "
              "file: give --out FILE", file=sys.stderr)
        return 2
    text = render(args.parties, keygen_method(args), args.bits, linked)
    if args.out:
        args.out.write_text(text)
        print(f"wrote {args.out}")
        if linked is not None:
            table = args.out.parent / compose_network.LINKS_FILE
            compose_network.write(table, args.parties, linked)
            print(f"wrote {table} (every link through the relay service under {linked.describe()})")
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
    from launcher.deployment.network import add_options

    add_options(compose)  # `up`'s --network, --latency, --bandwidth, --loss
    compose.set_defaults(handler=command)
