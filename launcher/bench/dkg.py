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

from mpdp.cryptocore.dkg.ceremony import run_in_process
from mpdp.cryptocore.threshold import generate_threshold_key
from mpdp.protocols.dppp.parameters import default_threshold


def measure(bits: int, holders: int) -> dict:
    threshold = default_threshold(holders)
    started, cpu = time.perf_counter(), time.process_time()
    public, _, figures = run_in_process(bits, holders, threshold)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    dealer_started, dealer_cpu = time.perf_counter(), time.process_time()
    generate_threshold_key(bits, threshold, holders)
    per_holder = figures.holders.values()
    return {
        "bits": bits, "holders": holders, "threshold": threshold,
        "wall_s_all_holders_in_one_process": round(wall, 1), "cpu_s_all_holders": round(cpu, 1),
        "critical_path_s": round(figures.critical_path_seconds, 1),
        "cpu_s_per_holder_max": round(max(h.cpu_seconds for h in per_holder), 1),
        "messages_per_holder_max": max(h.messages_sent for h in per_holder),
        "mb_sent_per_holder_max": round(max(h.bytes_sent for h in per_holder) / 1e6, 1),
        "rounds": figures.rounds, "attempts": figures.attempts, "candidates_tried": figures.candidates_tried,
        "biprimality_tests": figures.biprimality_tests,
        "dealer_wall_s": round(time.perf_counter() - dealer_started, 1),
        "dealer_cpu_s": round(time.process_time() - dealer_cpu, 1),
        "key_bits": public.n.bit_length(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bits", type=int, nargs="+", default=[1024, 2048])
    parser.add_argument("--holders", type=int, nargs="+", default=[3, 5, 10])
    args = parser.parse_args(argv)
    print(json.dumps({"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": platform.node(),
                      "python": platform.python_version()}), flush=True)
    for bits in args.bits:
        for holders in args.holders:
            print(json.dumps(measure(bits, holders)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
