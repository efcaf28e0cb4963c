"""`mpdp keygen`: the dealer's threshold key ceremony, one file per key holder, the public key and the certificates."""

from __future__ import annotations

import time
from pathlib import Path

from launcher.common.deployment_options import add_keygen_method_option
from launcher.common.options import key_bits, warn_small_key
from mpdp.cryptocore.keys.key_sizes import DEFAULT_KEY_BITS


def command(args) -> int:
    from launcher.deployment import bundles, certs
    from launcher.deployment.keygen import ceremony
    from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, party

    warn_small_key(args.bits)
    started = time.perf_counter()
    paths, threshold, holders = ceremony(args.parties, args.out, args.bits, args.threshold, overwrite=args.force,
                                         method=args.keygen)
    print(f"threshold key: {holders} holders, t = {threshold}, {args.bits} bits, {time.perf_counter() - started:.1f} s")
    identities = [AGGREGATOR, CURATOR, CLIENT] + [party(j) for j in range(1, args.parties + 1)]
    paths += certs.issue(args.out / "certs", identities, overwrite=args.force)
    bundles.seal(args.out)  # the dealer's directory: hand each holder its own files only
    print(f"certificates: a CA and {len(identities)} role identities")
    for path in paths:
        print(f"  {path}")
    return 0


def add_command(commands) -> None:
    keygen = commands.add_parser("keygen", help="threshold key ceremony: one file per key holder + the public key")
    keygen.add_argument("--parties", type=int, required=True)
    keygen.add_argument("--out", type=Path, required=True)
    keygen.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS)
    keygen.add_argument("--threshold", type=int, help="t (default ⌊2ℓ/3⌋ + 1; at least the smallest t with 2t > ℓ + 1)")
    keygen.add_argument("--force", action="store_true", help="replace existing key files (atomically)")
    add_keygen_method_option(keygen, default="dealer")
    keygen.set_defaults(handler=command)
