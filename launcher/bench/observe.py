"""`mpdp bench observe`: what the `[observe]` extra costs a session, and whether it counts what the report counts.

Two deployments of real role processes run side by side on loopback, alike but for the extra: one exports a span
per RPC on each side over OTLP/gRPC (to a counting receiver in this process) and serves Prometheus metrics; the
other has neither. Sessions alternate between them (off, on, then on, off, …, so that drift in the machine's
load falls on both), and the figure is the ratio of their median wall times, measured in one run. After each
observed session the role endpoints are scraped and the spans counted: both must equal the report's traffic,
kind by kind."""

from __future__ import annotations

import asyncio
import os
import statistics
from collections import Counter
from typing import Any

from launcher.bench.deployment import CpuMeter, deployment, synthetic_dataset
from launcher.bench.observed_roles import TARGET_RATIO, Observer, check_counts, environment, spans_of_all
from launcher.bench.scale import AUX_POINTS, scaled
from launcher.common.progress import progress


def _setup(protocols: list[str], parties: int, seed: int) -> tuple[dict, Any, dict[str, Any]]:
    entries = scaled()
    unknown = [name for name in protocols if name not in entries]
    if unknown:
        raise ValueError(f"unknown protocol {unknown[0]!r}; choose from {', '.join(entries)}")
    scales = {name: entries[name] for name in protocols}
    rows = max(scale.rows_per_party for scale in scales.values()) * parties * 3 // 2 + 3 * AUX_POINTS
    dataset = synthetic_dataset(2, rows, seed)
    options: dict[str, Any] = {"model": "logistic", "single_operator": True}
    if any(scale.public_points for scale in scales.values()):
        options["aux_fraction"] = AUX_POINTS / (rows * 2 / 3)
    return scales, dataset, options


def run(protocol: str, parties: int = 5, bits: int = 2048, sessions: int = 10, seed: int = 1) -> dict:
    if sessions < 1:
        raise ValueError("--sessions must be at least 1")
    scales, dataset, options = _setup([protocol], parties, seed)
    scale = scales[protocol]
    observer = Observer(parties)
    walls: dict[str, list[float]] = {"off": [], "on": []}
    cpu: dict[str, list[float]] = {"off": [], "on": []}  # the role processes' CPU seconds (less load-bound)
    checks = []
    try:
        progress(f"{protocol}: starting two deployments of {parties} parties ({bits}-bit keys), observe off and on")
        with environment({name: "" for name in observer.environment}), \
                deployment(parties, bits, dataset, seed=seed, **options) as off:
            with environment(observer.environment), deployment(parties, bits, dataset, seed=seed, **options) as on:
                asyncio.run(scale.session(off.topology, off.client_data, parties))  # warm-up: imports, teachers
                observer.session(scale, on, parties)
                known = set(observer.receiver.sessions())
                meters = {"off": CpuMeter(off.pids()), "on": CpuMeter(on.pids())}
                for number in range(sessions):
                    for name in ("off", "on") if number % 2 == 0 else ("on", "off"):
                        if name == "on":
                            wall, check = observer.session(scale, on, parties, spans=False, meter=meters["on"])
                            checks.append(check)
                            cpu["on"].append(check.pop("cpu_s"))
                        else:
                            meters["off"].start()
                            wall = asyncio.run(scale.session(off.topology, off.client_data, parties))["wall_s"]
                            cpu["off"].append(sum(meters["off"].stop().values()))
                        walls[name].append(wall)
                    progress(f"pair {number + 1}/{sessions}: off {walls['off'][-1]:.2f} s, on {walls['on'][-1]:.2f} s")
                spans = spans_of_all(observer.receiver, known, sessions, sum(sum(c["reported"].values()) for c in checks))
    finally:
        observer.stop()
    off_s, on_s = statistics.median(walls["off"]), statistics.median(walls["on"])
    from launcher.bench import observe_calls
    from launcher.registry import PROTOCOLS

    progress("the interceptors' CPU per call, in process")
    per_call = observe_calls.run(PROTOCOLS[protocol].message_type)
    reported: Counter[str] = sum((c.pop("reported") for c in checks), Counter())
    span_check = {**check_counts(reported, None, spans[1]), "sessions_seen": spans[0]}
    return {"protocol": protocol, "parties": parties, "bits": bits, "sessions_each": sessions,
            "cores": os.cpu_count(), "load_average": list(os.getloadavg()),
            "wall_s": walls, "median_off_s": off_s, "median_on_s": on_s, "ratio": on_s / off_s,
            "fastest_ratio": min(walls["on"]) / min(walls["off"]), "role_cpu_s": cpu,
            "cpu_ratio": statistics.median(cpu["on"]) / statistics.median(cpu["off"]),
            "wall_spread": spread(walls["off"]), "per_call": per_call,
            "target_ratio": TARGET_RATIO, "checks": checks, "spans": span_check,
            "all_match": all(c["metrics_match"] for c in checks) and span_check["spans_match"]
            and spans[0] == sessions}


def counts(protocols: list[str], parties: int = 3, bits: int = 1024, seed: int = 1) -> dict[str, dict]:
    """One observed deployment, one session of each protocol: each one's counts against its report."""
    scales, dataset, options = _setup(protocols, parties, seed)
    observer = Observer(parties, export_delay_ms=200)  # counted, not timed: spans exported sooner
    try:
        with environment(observer.environment), deployment(parties, bits, dataset, seed=seed, **options) as on:
            checks = {name: observer.session(scale, on, parties)[1] for name, scale in scales.items()}
            for check in checks.values():
                check.pop("reported")
                check.pop("cpu_s")
            return checks
    finally:
        observer.stop()


def spread(walls: list[float]) -> float:
    """How far apart sessions alike in all but chance lie: the interquartile range over the median."""
    if len(walls) < 4:
        return (max(walls) - min(walls)) / statistics.median(walls)
    quartiles = statistics.quantiles(walls, n=4)
    return (quartiles[2] - quartiles[0]) / quartiles[1]


def _verdict(ratio: float, target: float) -> str:
    return f"target ≤ {target:.2f}: {'met' if ratio <= target else 'NOT met'}"


def summary(report: dict) -> str:
    checks, spans, target = report["checks"], report["spans"], report["target_ratio"]
    cpu = report["role_cpu_s"]
    cpu_line = (f"  role processes' CPU on/off (medians): {report['cpu_ratio']:.3f} "
                f"({statistics.median(cpu['off']):.3f} → {statistics.median(cpu['on']):.3f} s a session; "
                f"{_verdict(report['cpu_ratio'], target)})")
    wall_line = (f"  wall on/off (medians): {report['ratio']:.3f} ({report['median_off_s']:.3f} → "
                 f"{report['median_on_s']:.3f} s; {_verdict(report['ratio'], target)}); fastest session on/off "
                 f"{report['fastest_ratio']:.3f}")
    # When the sessions without the extra differ among themselves by more than the margin the target allows, the
    # wall ratio cannot show that margin: the CPU the roles spent, less bound to the machine's load, leads.
    noisy = report["wall_spread"] > target - 1
    ratios = [cpu_line, wall_line + (f"; noise: sessions without the extra spread {report['wall_spread']:.0%} "
                                     f"(interquartile range / median), more than the {target - 1:.0%} the target allows"
                                     if noisy else "")]
    lines = [
        f"observe overhead, {report['protocol']} at K = {report['parties']} ({report['bits']}-bit keys), "
        f"{report['sessions_each']} sessions each way, alternating, {report['cores']} cores, load "
        + ", ".join(f"{x:.1f}" for x in report["load_average"]),
        *(ratios if noisy else ratios[::-1]),
        f"  Prometheus calls = report messages, kind by kind: {sum(c['metrics_match'] for c in checks)} of "
        f"{len(checks)} observed sessions ({checks[0]['messages'] if checks else 0} messages a session)",
        f"  server spans over OTLP = report messages, kind by kind, all observed sessions together: "
        f"{'yes' if spans['spans_match'] else 'NO'} ({spans['server_spans']} spans from {spans['sessions_seen']} "
        f"sessions; {spans['client_spans']} client spans from the roles' own calls)",
    ]
    if "per_call" in report:
        from launcher.bench.observe_calls import summary as per_call

        lines.append(per_call(report["per_call"]))
        # The in-process figure scaled to a session: a server and a client side per message, each message's
        # extra against the roles' CPU for the session without the extra.
        messages = checks[0]["messages"] if checks else 0
        extra_s = report["per_call"]["extra_ms"]["on"] / 1e3 * messages
        lines.append(f"  that per call × {messages} messages = {extra_s * 1e3:.1f} ms, "
                     f"{extra_s / statistics.median(cpu['off']):.2%} of the roles' CPU a session without the extra "
                     f"(the spans' OTLP sends and the scrapes not included)")
    for check in [*checks, spans]:
        if check["differences"]:
            lines.append(f"  differences (kind, report, counted): {check['differences']}")
            break
    return "\n".join(lines)
