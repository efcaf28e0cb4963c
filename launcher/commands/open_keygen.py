"""`mpdp open-keygen`: open the distributed key generation at a deployment's key holders and write the public key they agree on."""

from __future__ import annotations

from pathlib import Path

from launcher.common.options import key_bits
from mpdp.cryptocore.keys.key_sizes import DEFAULT_KEY_BITS


def command(args) -> int:
    from launcher.deployment.distributed_keygen import open_at_holders
    from mpdp.deployments.topology import Topology

    if args.public_out and all(path.is_file() for path in args.public_out):
        print("kept the existing public key: the key holders made it earlier (their shares exist)")
        return 0
    figures = open_at_holders(Topology.load(args.topology), args.bits, args.public_out, args.startup_timeout)
    print(f"distributed key generation: {figures}")
    return 0


def add_command(commands) -> None:
    opened = commands.add_parser("open-keygen", help="open the distributed key generation at a deployment's key "
                                                     "holders and write the public key they agree on (compose)")
    opened.add_argument("--topology", type=Path, required=True, help="the client's topology")
    opened.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS)
    opened.add_argument("--public-out", type=Path, action="append", required=True,
                        help="where public_key.json goes (repeat: one per bundle that needs it)")
    opened.add_argument("--startup-timeout", type=float, default=300.0, metavar="S")
    opened.set_defaults(handler=command)
