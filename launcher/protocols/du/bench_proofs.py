"""The cost of one proven Du upload (docs/malicious-party-du.md): `python -m launcher.protocols.du.bench_proofs`.

One party's upload under secure aggregation with its range proof, at the given key size, d and cap: the time to
build it (bits, proofs, products, packing), the server's time to check it, and its size on the wire beside the
packed ciphertexts alone.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from datetime import datetime, timezone

import numpy as np

from launcher.common.options import key_bits
from launcher.protocol import Option
from mpdp.cryptocore.keys.key_sizes import DEFAULT_KEY_BITS
from mpdp.cryptocore.paillier.threshold import generate_threshold_key
from mpdp.proto.v1 import common_pb2, du_pb2
from mpdp.protocols.du import proven_upload
from mpdp.protocols.du.parameters import FRACTIONAL_BITS, DuParameters


def measure(bits: int, dimension: int, cap: int, bound: float, repeat: int) -> dict:
    public, _ = generate_threshold_key(bits, 3, 5)
    p = DuParameters(method="functional", epsilon=1.0, delta=1e-5, rounds=1, tolerance=0.0, local_epochs=1,
                     learning_rate=0.1, regularization=0.01, parties=5, dimension=dimension, bound=bound,
                     secure_aggregation=True, honest_fraction=0.6, key_id=public.key_id, records_cap=cap)
    rng = np.random.default_rng(1)
    builds, checks = [], []
    for _ in range(repeat):
        theta = np.round(rng.uniform(-bound, bound, p.weights) * 2**FRACTIONAL_BITS) / 2**FRACTIONAL_BITS
        scaled = [int(v) for v in np.round(theta * 2**FRACTIONAL_BITS)]
        started = time.process_time()
        packed, proof = proven_upload.build(public, p, cap, scaled, b"bench")
        builds.append(time.process_time() - started)
        encrypted = common_pb2.Ciphertexts(key_id=public.key_id,
                                           values=[c.to_bytes(2 * ((public.n.bit_length() + 7) // 8), "big")
                                                   for c in packed])
        started = time.process_time()
        proven_upload.check(public, p, encrypted, proof, b"bench")
        checks.append(time.process_time() - started)
    plain = du_pb2.DuUpload(round=0, encrypted=encrypted).ByteSize()
    return {"bits": bits, "d": dimension, "cap": cap, "B": bound, "bit_proofs": len(proof.bit_proofs),
            "product_proofs": len(proof.product_proofs), "packed_ciphertexts": len(packed),
            "build_cpu_s": [round(t, 2) for t in builds], "check_cpu_s": [round(t, 2) for t in checks],
            "upload_bytes_with_proof": du_pb2.DuUpload(round=0, encrypted=encrypted, proof=proof).ByteSize(),
            "upload_bytes_without": plain}


def options() -> list[Option]:
    """`mpdp bench du-proofs`'s options, which `python -m` of this module takes too."""
    return [Option("bits", {"type": key_bits, "default": DEFAULT_KEY_BITS}),
            Option("dimension", {"type": int, "default": 123, "help": "d (a9a: 123)"}),
            Option("cap", {"type": int, "default": 10_854, "help": "the public cap on n_i (a9a's 32 561 rows in 3)"}),
            Option("bound", {"type": float, "default": 100.0, "help": "B (as `mpdp run du` bounds uploads)"}),
            Option("repeat", {"type": int, "default": 2})]


def run(args: argparse.Namespace) -> int:
    print(json.dumps({"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": platform.node(),
                      "python": platform.python_version()}), flush=True)
    print(json.dumps(measure(args.bits, args.dimension, args.cap, args.bound, args.repeat)), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for option in options():
        option.add_to(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
