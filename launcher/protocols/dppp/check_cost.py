"""What the DPPP client's check of a release costs with the key holders' proofs checked at once and one by one
(docs/client-checks.md, "Cost"), in one run and in CPU seconds, so that the machine's other load does not enter:
`python -m launcher.protocols.dppp.check_cost --bits 2048 --teachers 10 --classes 10 --queries 200 --repeats 5`.

One packed DPPP round in process with the real role sides and real cryptography (a dealer's key, t of ℓ = K
holders as `mpdp up` makes it): the teachers vote, the aggregator asks t holders, each holder partially decrypts
(its CPU seconds: the round's critical work), and the client's `release.check_round` runs on the result, the two
ways alternately. Contributions are unsigned here (no certificates in process): the K ECDSA checks the client
adds with them cost well under a millisecond each."""

from __future__ import annotations

import argparse
import json
import statistics
import time

from launcher.protocols.dppp.bench_holder_checks import in_process_round
from mpdp.cryptocore.paillier.threshold import generate_threshold_key
from mpdp.cryptocore.paillier.threshold_batch import verify_one_by_one
from mpdp.proto.v1 import dppp_pb2, threshold_sum_pb2
from mpdp.protocols.dppp.release import check_round
from mpdp.sessions.identity import CLIENT, party
from mpdp.threshold_sum import combiner
from mpdp.vote_proofs.assurance import Assurance


def _released(public, shares, teachers: int, classes: int, queries: int):
    parameters, sides, aggregator = in_process_round(public, shares, teachers, classes, queries, Assurance.NONE)
    aggregator.receive(CLIENT, "open", dppp_pb2.DpppRoundRequest())
    requests = []
    for teacher, side in sides.items():
        requests = aggregator.receive(party(teacher), "votes", side.cast_votes())
    holder_cpu = []
    for outbound in requests:
        if outbound.kind != "decryption_request":
            continue
        started = time.process_time()
        assert isinstance(outbound.body, threshold_sum_pb2.DecryptionRequest)
        answer = sides[outbound.to.id].partially_decrypt(outbound.body)
        holder_cpu.append(time.process_time() - started)
        aggregator.receive(outbound.to, "partial_decryptions", answer)
    released = aggregator.result()
    assert released is not None and isinstance(released[1], dppp_pb2.DpppRoundResult)
    return parameters, released[1], holder_cpu


def _one_by_one(self, answers, one_by_one=()):
    """`SumCombiner.accept_together` as each proof checked alone (the verdicts are the same)."""
    admitted = [self._admit(holder, message) for holder, message in answers]
    self.rejected.update(verify_one_by_one(self.public_key, self.aggregate, admitted, self.proof_context))
    self.partials.update({batch.holder: batch for batch in admitted if batch.holder not in self.rejected})


def run(bits: int, teachers: int, classes: int, queries: int, repeats: int) -> dict:
    public, shares = generate_threshold_key(bits, teachers // 2 + 2 if teachers > 3 else teachers, teachers)
    parameters, result, holder_cpu = _released(public, shares, teachers, classes, queries)
    holders = list(range(1, teachers + 1))
    together = combiner.SumCombiner.accept_together
    check_round(parameters, public, "bench", None, holders, result)  # v's fixed-base table, built once per key
    seconds: dict[str, list[float]] = {"together": [], "one_by_one": []}
    for _ in range(repeats):
        for mode, accept in (("one_by_one", _one_by_one), ("together", together)):
            combiner.SumCombiner.accept_together = accept  # type: ignore[method-assign]
            try:
                started = time.process_time()
                check_round(parameters, public, "bench", None, holders, result)
                seconds[mode].append(time.process_time() - started)
            finally:
                combiner.SumCombiner.accept_together = together  # type: ignore[method-assign]
    medians = {mode: statistics.median(values) for mode, values in seconds.items()}
    return {"bits": bits, "teachers": teachers, "classes": classes, "queries": queries,
            "threshold": public.threshold, "holders": public.holders, "answers": len(result.evidence.answers),
            "holder_cpu_s": statistics.median(holder_cpu), "client_check_cpu_s": seconds,
            "median_together_s": medians["together"], "median_one_by_one_s": medians["one_by_one"],
            "speed_up": medians["one_by_one"] / medians["together"]}


def summary(report: dict) -> str:
    holder = report["holder_cpu_s"]
    return "\n".join([
        f"the DPPP client's check, K = {report['teachers']}, C = {report['classes']}, Q = {report['queries']}, "
        f"{report['bits']}-bit key, t = {report['threshold']} of {report['holders']}, {report['answers']} answers",
        f"  one key holder's partial decryptions and proof: {holder:.3f} CPU s",
        f"  the client's check, proofs one by one: {report['median_one_by_one_s']:.3f} CPU s "
        f"({report['median_one_by_one_s'] / holder:.2f} holders' work)",
        f"  the client's check, proofs at once:    {report['median_together_s']:.3f} CPU s "
        f"({report['median_together_s'] / holder:.2f} holders' work); {report['speed_up']:.2f}× faster"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bits", type=int, default=2048)
    parser.add_argument("--teachers", type=int, default=10)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="also write the report here")
    args = parser.parse_args()
    report = run(args.bits, args.teachers, args.classes, args.queries, args.repeats)
    print(summary(report))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)


if __name__ == "__main__":
    main()
