"""Distributed key generation against the dealer, in one process: `python -m launcher.bench.dkg`.

Every holder's state machine runs here, one after the other, so the per-holder CPU time, messages
and bytes are what each holder's process would spend (bytes: the integers as sent, without
framing); the critical path (Σ over rounds of the slowest holder) is the wall time on ℓ machines
with no network delay. The dealer's ceremony runs in the same process for comparison.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from datetime import datetime, timezone

from mpdp.cryptocore.dkg import messages, sieve, small_primes
from mpdp.cryptocore.dkg.ceremony import InProcess, run_in_process
from mpdp.cryptocore.dkg.holder import default_batch
from mpdp.cryptocore.paillier.threshold import generate_threshold_key
from mpdp.threshold_sum.quorums import default_threshold


def measure(bits: int, holders: int, bound: int | None = None, batch: int | None = None) -> dict:
    """One ceremony and one dealt key. With `batch`, CPU per candidate pair at a sieving bound: a ceremony's
    expected cost is about expected_pairs × that plus the biprimality tests (docs/performance-dkg.md)."""
    threshold = default_threshold(holders)
    bound = bound or sieve.default_bound(bits)
    started, cpu = time.perf_counter(), time.process_time()
    public, _, figures = run_in_process(bits, holders, threshold, batch=batch, sieve_bound=bound)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    dealer_started, dealer_cpu = time.perf_counter(), time.process_time()
    generate_threshold_key(bits, threshold, holders)
    per_holder = figures.holders.values()
    return {
        "bits": bits, "holders": holders, "threshold": threshold, "sieve_bound": bound,
        "sieve_modulus_bits": sieve.sieving_modulus(bits, holders, bound).bit_length(),
        "expected_pairs": round(sieve.expected_pairs(bits, holders, bound)),
        "batch": batch or default_batch(bits, holders, bound),
        "wall_s_all_holders_in_one_process": round(wall, 1), "cpu_s_all_holders": round(cpu, 1),
        "critical_path_s": round(figures.critical_path_seconds, 1),
        # the commit's first step: checking every holder's digest (the digest is made with the confirmation)
        "acknowledgement_critical_path_ms": round(1000 * figures.stage_seconds.get(messages.ACKNOWLEDGEMENT, 0.0), 3),
        "cpu_s_per_holder_max": round(max(h.cpu_seconds for h in per_holder), 1),
        "messages_per_holder_max": max(h.messages_sent for h in per_holder),
        "mb_sent_per_holder_max": round(max(h.bytes_sent for h in per_holder) / 1e6, 1),
        "kb_sent_per_holder_per_pair": round(max(h.bytes_sent for h in per_holder) / 1e3 / figures.candidates_tried, 2),
        "small_primes_sieved": list(small_primes.primes(holders)),  # in GF(r^k), beside M's primes ℓ < r ≤ B
        "rounds": figures.rounds, "attempts": figures.attempts, "candidates_tried": figures.candidates_tried,
        "biprimality_tests": figures.biprimality_tests,
        "cpu_ms_per_pair_all_holders": round(1000 * cpu / figures.candidates_tried, 2),
        "dealer_wall_s": round(time.perf_counter() - dealer_started, 1),
        "dealer_cpu_s": round(time.process_time() - dealer_cpu, 1),
        "key_bits": public.n.bit_length(),
    }


def one_attempt(bits: int, holders: int, bound: int, batch: int) -> dict:
    """CPU per candidate pair over one attempt (sieve, products, trial division, the biprimality tests of its
    survivors), all holders: what choosing the sieving bound trades against expected_pairs."""
    ceremony = InProcess(bits, holders, default_threshold(holders), batch, bound)
    cpu = time.process_time()
    ceremony.run(until=messages.CANDIDATES)
    sieve_cpu = time.process_time() - cpu
    ceremony.run(until=messages.SIEVE)  # the next attempt's, or the end if this one found the key
    cpu = time.process_time() - cpu
    expected = sieve.expected_pairs(bits, holders, bound)
    per_pair = cpu / batch
    return {"bits": bits, "holders": holders, "sieve_bound": bound, "batch": batch,
            "sieve_modulus_bits": sieve.sieving_modulus(bits, holders, bound).bit_length(),
            "biprimality_tests": ceremony.holders[0].biprimality_tests,
            "sieve_cpu_ms_per_pair": round(1000 * sieve_cpu / batch, 3), "cpu_ms_per_pair": round(1000 * per_pair, 3),
            "kb_sent_per_holder_per_pair": round(max(h.bytes_sent for h in ceremony.figures.holders.values()) / 1e3 / batch, 2),
            "expected_pairs": round(expected), "expected_cpu_s": round(expected * per_pair, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bits", type=int, nargs="+", default=[1024, 2048])
    parser.add_argument("--holders", type=int, nargs="+", default=[3, 5, 10])
    parser.add_argument("--sieve-bound", type=int, nargs="+", default=[0],
                        help="largest prime of the sieving modulus (default: the ceremony's own)")
    parser.add_argument("--batch", type=int, help="candidate pairs per attempt (default: the ceremony's own)")
    parser.add_argument("--runs", type=int, default=1, help="ceremonies per configuration")
    parser.add_argument("--one-attempt", action="store_true",
                        help="one attempt of --batch pairs (default 1000) per configuration: CPU per pair by bound")
    args = parser.parse_args(argv)
    print(json.dumps({"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": platform.node(),
                      "python": platform.python_version()}), flush=True)
    for bits in args.bits:
        for holders in args.holders:
            for bound in args.sieve_bound:
                for _ in range(args.runs):
                    figures = one_attempt(bits, holders, bound or sieve.default_bound(bits), args.batch or 1000) \
                        if args.one_attempt else measure(bits, holders, bound or None, args.batch)
                    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
