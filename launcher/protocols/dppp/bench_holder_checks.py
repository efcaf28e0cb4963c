"""What the key holders' checks of proven votes and verifiable noise cost (docs/malicious-party.md, "Checked where it
is decrypted"), beside the aggregator's own checks of the same contributions, in one run:
`python -m launcher.protocols.dppp.bench_holder_checks --bits 2048 --teachers 10 --classes 10 --queries 20`.

One DPPP round in process, with the real role sides (aggregator/dppp.py, party/dppp.py) and real cryptography: the
teachers vote, the aggregator checks and folds (CPU seconds of its `votes`, `reveal` and `flipped` steps), and one
key holder checks the decryption request (`vote_proofs/well_formed.check`: CPU seconds, and the request's bytes
beside those of the same request without the holders' evidence). Contributions are unsigned here (no certificates
in process): the K ECDSA checks a holder adds with them cost well under a millisecond each. Both modes run: proven
votes; proven votes with verifiable noise; and that with `holders_check_bits` (bits made in the round; pooled bits
carry the same proofs)."""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.linear_model import LogisticRegression

from aggregator.dppp import DpppAggregatorSide
from mpdp.cryptocore.paillier.threshold import generate_threshold_key
from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.protocols.dppp.parameters import DEFAULT_HONEST_FRACTION, DpppParameters
from mpdp.sessions.identity import AGGREGATOR, CLIENT, party
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.vote_proofs import well_formed
from mpdp.vote_proofs.assurance import Assurance
from party.dppp import DpppTeacherSide
from party.resources import PartyResources

EPSILON, DELTA = 10.0, 1e-5


def in_process_round(public, shares, teachers: int, classes: int, queries: int, assurance: Assurance):
    """One DPPP round's sides in this process, at ε = 10: K teachers on a seeded toy model and the aggregator,
    not yet opened (what the benches of its costs drive by hand)."""
    parameters = DpppParameters.with_minimal_noise(EPSILON, DELTA, queries, classes, teachers, DEFAULT_HONEST_FRACTION,
                                                   True, public.key_id, assurance=assurance)
    parameters.calibrate()
    rng = np.random.default_rng(1)
    features = rng.normal(size=(max(4 * classes, queries), 4))
    model = LogisticRegression().fit(features, np.arange(len(features)) % classes)
    sides = {i: DpppTeacherSide("bench", PartyResources(i, public, shares[i - 1], model, features, np.zeros(1)),
                                parameters, features[:queries], 600.0) for i in range(1, teachers + 1)}
    aggregator = DpppAggregatorSide("bench", parameters, matrix_to_proto(features[:queries]), 600.0, public,
                                    list(sides), list(sides))
    return parameters, sides, aggregator


def _round(public, shares, teachers: int, classes: int, queries: int, verifiable: bool, check_bits: bool) -> dict:
    parameters, sides, aggregator = in_process_round(
        public, shares, teachers, classes, queries,
        Assurance.HOLDERS_CHECK_BITS if check_bits else Assurance.VERIFIABLE_NOISE if verifiable
        else Assurance.PROVEN_VOTES)
    aggregator.receive(CLIENT, "open", None)
    aggregator_cpu = 0.0
    request: threshold_sum_pb2.DecryptionRequest | None = None

    def to_aggregator(sender: int, kind: str, body) -> list:
        nonlocal aggregator_cpu
        started = time.process_time()
        outbound = aggregator.receive(party(sender), kind, body)
        aggregator_cpu += time.process_time() - started
        return outbound

    queue = []
    for teacher, side in sides.items():
        queue += to_aggregator(teacher, "votes", side.cast_votes())
    while queue:
        message = queue.pop(0)
        if message.kind == "decryption_request":
            request = message.body
            continue
        for answer in sides[message.to.id].receive(AGGREGATOR, message.kind, message.body):
            queue += to_aggregator(message.to.id, answer.kind, answer.body)
    assert request is not None and len(request.contributions) == teachers
    holder = sides[1]
    rows, width = holder.ballot_shape
    ballots = well_formed.Ballots("dppp", "bench", parameters.layout(public.n), rows, width, parameters.share_range,
                                  verifiable, check_bits)
    started = time.process_time()
    well_formed.check(public, ballots, holder.slot, None, request, teachers)
    holder_cpu = time.process_time() - started
    bare = threshold_sum_pb2.DecryptionRequest(contributions=[threshold_sum_pb2.Contribution(
        sender=c.sender, ciphertexts=c.ciphertexts, signature=c.signature) for c in request.contributions])
    mode = "proven votes" + (", verifiable noise" if verifiable else "") + (", holders check bits" if check_bits else "")
    return {"mode": mode,
            "tosses_per_teacher": parameters.share_range,
            "bits_per_teacher": parameters.values * parameters.share_range if verifiable else 0,
            "aggregator_check_cpu_s": aggregator_cpu, "holder_check_cpu_s": holder_cpu,
            "holder_vs_aggregator": holder_cpu / aggregator_cpu if aggregator_cpu else None,
            "request_bytes": request.ByteSize(), "request_bytes_without_checks": bare.ByteSize()}


def run(bits: int, teachers: int, classes: int, queries: int) -> dict:
    started = time.perf_counter()
    public, shares = generate_threshold_key(bits, teachers // 2 + 1 if teachers > 2 else teachers, teachers)
    keygen_s = time.perf_counter() - started
    return {"bits": bits, "teachers": teachers, "classes": classes, "queries": queries, "epsilon": EPSILON,
            "keygen_s": keygen_s,
            "modes": [_round(public, shares, teachers, classes, queries, verifiable, check_bits)
                      for verifiable, check_bits in ((False, False), (True, False), (True, True))]}


def summary(report: dict) -> str:
    lines = [f"key holders' checks, K = {report['teachers']}, C = {report['classes']}, Q = {report['queries']}, "
             f"{report['bits']}-bit key, ε = {report['epsilon']}"]
    for mode in report["modes"]:
        ratio = mode["holder_vs_aggregator"]
        lines.append(f"  {mode['mode']} (N_i = {mode['tosses_per_teacher']}, {mode['bits_per_teacher']} bits per "
                     f"teacher): aggregator {mode['aggregator_check_cpu_s']:.2f} CPU s, each key holder "
                     f"{mode['holder_check_cpu_s']:.2f} CPU s ({ratio:.2f}×); request per holder "
                     f"{mode['request_bytes'] / 1e6:.2f} MB (without the checks' evidence "
                     f"{mode['request_bytes_without_checks'] / 1e6:.3f} MB)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bits", type=int, default=2048)
    parser.add_argument("--teachers", type=int, default=10)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--json", help="also write the report here")
    args = parser.parse_args()
    report = run(args.bits, args.teachers, args.classes, args.queries)
    print(summary(report))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)


if __name__ == "__main__":
    main()
