"""`mpdp bench scale`: how each protocol's cost grows with the number of parties.

For each K, a fresh deployment of real processes (logical parties share processes where the protocol is
run at scale: `--parties-per-process`), one warm-up session and one measured one. Reported per K: wall
time, CPU of every process, messages, bytes and the largest process's peak memory, in total and per
party, and the party hosts' resident memory per logical party at rest (after `up`) and after the sessions; and for each protocol the exponent b of a least-squares fit total ∝ K^b (b ≤ 1.1: per-party cost
flat). All on a synthetic data set with a fixed number of rows per party (and, for Hamm, a fixed X_aux),
so only K changes."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import numpy as np

from launcher.bench.deployment import CpuMeter, deployment, peak_rss_mb, resident_mb, synthetic_dataset
from launcher.common.progress import progress, steps
from launcher.protocol import Scale

AUX_POINTS = 100  # the curator's X_aux, the same at every K (protocols whose `Scale` has public points)


def scaled() -> dict[str, Scale]:
    """The registry's protocols that `bench scale` measures, in registry order."""
    from launcher.registry import PROTOCOLS

    return {name: protocol.scale for name, protocol in PROTOCOLS.items() if protocol.scale is not None}


def _measure(protocol: str, scale: Scale, parties: int, bits: int, seed: int) -> dict:
    rows = scale.rows_per_party * parties * 3 // 2 + 3 * AUX_POINTS
    dataset = synthetic_dataset(2, rows, seed)
    options: dict[str, Any] = {"model": "logistic", "parties_per_process": scale.parties_per_process,
                              "single_operator": True}  # logical parties of one simulation
    if scale.public_points:
        options["aux_fraction"] = AUX_POINTS / (rows * 2 / 3)
    if scale.startup_timeout is not None:
        options["startup_timeout"] = scale.startup_timeout
    per = scale.parties_per_process
    progress(f"{protocol}, K = {parties}: starting the roles ({per} {'party' if per == 1 else 'parties'} per process)")
    started = time.perf_counter()
    with deployment(parties, bits, dataset, seed=seed, **options) as target:
        startup_s = time.perf_counter() - started
        hosts = [pid for name, pid in target.pids().items() if name.startswith("party/")]
        at_rest = sum(resident_mb(pid) for pid in hosts) / parties  # teachers and X_aux not made yet
        asyncio.run(scale.session(target.topology, target.client_data, parties))  # warm-up: tables, imports, caches
        meter = CpuMeter(target.pids())
        meter.start()
        measured = asyncio.run(scale.session(target.topology, target.client_data, parties))
        cpu = meter.stop()
        peak = max(peak_rss_mb(pid) for pid in target.pids().values())
        after = sum(resident_mb(pid) for pid in hosts) / parties
        processes = len(target.pids())
    messages = sum(r["messages"] for r in measured["traffic"])
    size = sum(r["request_bytes"] + r["response_bytes"] for r in measured["traffic"])
    progress(f"{protocol}, K = {parties}: {measured['wall_s']:.2f} s, {messages} messages, {size / 1e6:.1f} MB")
    return {"parties": parties, "processes": processes, "startup_s": startup_s, "wall_s": measured["wall_s"],
            "cpu_s": sum(cpu.values()), "messages": messages, "bytes": size, "peak_rss_mb_largest_process": peak,
            "per_party": {"wall_s": measured["wall_s"] / parties, "cpu_s": sum(cpu.values()) / parties,
                          "messages": messages / parties, "bytes": size / parties,
                          "resident_mb_at_rest": at_rest, "resident_mb_after_sessions": after}}


def growth_exponent(sizes: list[int], totals: list[float]) -> float:
    """b of the least-squares fit log total = a + b·log K."""
    slope, _ = np.polyfit(np.log(sizes), np.log(totals), 1)
    return float(slope)


def run(protocols: list[str], sizes: dict[str, list[int]] | None = None, bits: int = 2048, seed: int = 1) -> dict:
    entries = scaled()
    unknown = set(protocols) - set(entries)
    if unknown:
        raise ValueError(f"unknown protocol(s) {', '.join(sorted(unknown))}; choose from {', '.join(entries)}")
    sizes = {**{name: list(scale.sizes) for name, scale in entries.items()}, **(sizes or {})}
    results: dict[str, Any] = {"bits": bits, "protocols": {}}
    for protocol in protocols:
        scale = entries[protocol]
        points = []
        with steps(len(sizes[protocol]), f"{protocol}: deployments of K = {', '.join(map(str, sizes[protocol]))}") as done:
            for k in sizes[protocol]:
                points.append(_measure(protocol, scale, k, bits, seed))
                done.advance(f"K = {k}")
        ks = [p["parties"] for p in points]
        exponents = {metric: growth_exponent(ks, [p[metric] for p in points]) if len(ks) > 1 else math.nan
                     for metric in ("wall_s", "cpu_s", "messages", "bytes")}
        entry: dict[str, Any] = {"points": points, "growth_exponents": exponents,
                                 "parties_per_process": scale.parties_per_process}
        if scale.target_exponent is not None:
            entry["target_exponent"] = scale.target_exponent
            entry["target_met"] = all(b <= scale.target_exponent for b in exponents.values())
        results["protocols"][protocol] = entry
    return results


def summary(report: dict) -> str:
    lines = [f"Cost growth with the number of parties ({report['bits']}-bit keys; total ∝ K^b):"]
    for protocol, entry in report["protocols"].items():
        per = entry["parties_per_process"]
        lines.append(f"  {protocol} ({per} {'party' if per == 1 else 'parties'} per process)")
        lines.append(f"    {'K':>5} {'wall s':>8} {'CPU s':>8} {'messages':>9} {'MB':>8} {'per party: ms':>14} "
                     f"{'msgs':>6} {'kB':>8} {'peak MB':>8} {'MB/party: rest':>15} {'after':>6}")
        for p in entry["points"]:
            per = p["per_party"]
            lines.append(f"    {p['parties']:>5} {p['wall_s']:>8.2f} {p['cpu_s']:>8.1f} {p['messages']:>9} "
                         f"{p['bytes'] / 1e6:>8.1f} {1000 * per['wall_s']:>14.1f} {per['messages']:>6.1f} "
                         f"{per['bytes'] / 1e3:>8.1f} {p['peak_rss_mb_largest_process']:>8.0f} "
                         f"{per.get('resident_mb_at_rest', math.nan):>15.2f} "
                         f"{per.get('resident_mb_after_sessions', math.nan):>6.2f}")
        b = entry["growth_exponents"]
        verdict = ""
        if "target_met" in entry:
            verdict = f"  (target b ≤ {entry['target_exponent']}: {'met' if entry['target_met'] else 'NOT met'})"
        lines.append(f"    b: wall {b['wall_s']:.2f}, CPU {b['cpu_s']:.2f}, messages {b['messages']:.2f}, "
                     f"bytes {b['bytes']:.2f}{verdict}")
    return "\n".join(lines)
