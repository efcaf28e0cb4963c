"""What the `[observe]` extra costs a protocol bench's own round, measured in the bench's run (`mpdp bench dppp`
prints it beside its other figures).

A role installs its interceptors when its server starts, from the variables it starts with, so the extra cannot be
switched on in a running deployment: the comparison is between the bench's own deployment (off) and a second one
started beside it, alike but for the extra (on: a span per RPC on each side, exported over OTLP/gRPC to a counting
receiver in this process, and a Prometheus endpoint per role). Rounds alternate in pairs, off then on, then on then
off, …, so that drift in the machine's load falls on both alike. Each pair gives a ratio on/off of the CPU seconds
of all role processes (summed, read from /proc, over the round alone: the scrapes around it are outside) and of
the round's wall time; the figure is the median of the pairs' ratios, printed with their lowest and highest.

The ≤ 3 % target reads the CPU ratio: the machine is shared, and a round's wall time moves with the other jobs'
load by far more than 3 %, the CPU the roles spend much less. The wall ratio is printed beside it. Every observed
round is also counted: the calls its role endpoints answered must equal its report's messages kind by kind, and
the server spans received, summed over the measured rounds, their messages summed. Last, the interceptors' CPU per
call in process (observe_calls.py) times a round's messages gives their own share, which the pairs' ratios, moving
by several percent from pair to pair under load, cannot resolve."""

from __future__ import annotations

import asyncio
import os
import statistics
from collections import Counter
from collections.abc import Callable, Coroutine
from contextlib import AbstractContextManager
from typing import Any

from launcher.bench import observe_calls, observed_roles
from launcher.bench.deployment import CpuMeter, Deployment, wait_until_idle
from launcher.common.progress import progress

TARGET_RATIO = observed_roles.TARGET_RATIO
TARGET_READS = "cpu_s"  # the role processes' CPU seconds, summed
ORDERS = (("off", "on"), ("on", "off"))  # pair by pair, so that neither side always runs first
IDLE_LIMIT_S = 10.0  # at most this long for the roles to fall idle before a round

# One round on a deployment's topology with its client data → {"wall_s": …, "traffic": the report's rows}.
Round = Callable[[Any, dict], Coroutine[Any, Any, dict]]


def skipped_because() -> str | None:
    """Why the overhead cannot be measured here, or None. The bench's own deployment must run without the extra
    (it is the `off` side), and the extra must be installed for the other."""
    from mpdp.observe import metrics_available, tracing_available
    from mpdp.observe.exporting import requested
    from mpdp.observe.role import BASE_VARIABLE, PORT_VARIABLE

    if not (tracing_available() and metrics_available()):
        return "the [observe] extra is not installed (pip install 'mpdp[observe]')"
    if requested() or os.environ.get(BASE_VARIABLE) or os.environ.get(PORT_VARIABLE):
        return "the bench's own deployment is observed (OTEL_TRACES_EXPORTER or MPDP_METRICS_PORT* set)"
    return None


def alternate(pairs: int, measure: Callable[[str], tuple[float, float]]) -> dict[str, dict[str, list[float]]]:
    """`pairs` pairs of rounds in alternating order; measure("off" | "on") → (wall seconds, CPU seconds)."""
    measured: dict[str, dict[str, list[float]]] = {side: {"wall_s": [], "cpu_s": []} for side in ("off", "on")}
    for number in range(pairs):
        for side in ORDERS[number % 2]:
            wall, cpu = measure(side)
            measured[side]["wall_s"].append(wall)
            measured[side]["cpu_s"].append(cpu)
        progress(f"observe overhead, pair {number + 1}/{pairs}: CPU off {measured['off']['cpu_s'][-1]:.2f} s, "
                 f"on {measured['on']['cpu_s'][-1]:.2f} s; wall off {measured['off']['wall_s'][-1]:.2f} s, "
                 f"on {measured['on']['wall_s'][-1]:.2f} s")
    return measured


def ratios(measured: dict[str, dict[str, list[float]]], what: str) -> dict:
    """On/off of one measure: each pair's, their median and extremes, and the ratio of the two sides' medians."""
    on, off = measured["on"][what], measured["off"][what]
    per_pair = [a / b for a, b in zip(on, off)]
    return {"per_pair": per_pair, "median": statistics.median(per_pair), "lowest": min(per_pair),
            "highest": max(per_pair), "median_off": statistics.median(off), "median_on": statistics.median(on),
            "of_medians": statistics.median(on) / statistics.median(off), "of_totals": sum(on) / sum(off)}


def run(off: Deployment, start_observed: Callable[[], AbstractContextManager[Deployment]], play: Round,
        parties: int, pairs: int, message_type, warmup: int = 1) -> dict:
    """`off` is the bench's running deployment; `start_observed()` starts one alike (it is started inside the
    variables that turn the extra on); `play` is the bench's round; `message_type` the protocol's message, which
    the per-call measurement carries. `warmup` rounds on the new deployment first
    (its fixed-base tables are cold), the first one's spans waited for and counted."""
    if pairs < 1:
        raise ValueError("observe overhead: at least one pair of rounds")
    reason = skipped_because()
    if reason is not None:
        return {"skipped": reason}
    observer = observed_roles.Observer(parties)
    played = _Played(play)
    checks: list[dict] = []
    try:
        progress(f"observe overhead: starting a second deployment of {parties} parties with the [observe] extra on")
        with observed_roles.environment(observer.environment), start_observed() as on:
            warm = [observer.session(played, on, parties, spans=number == 0)[1] for number in range(warmup)]
            known = set(observer.receiver.sessions())
            meters = {"off": CpuMeter(off.pids()), "on": CpuMeter(on.pids())}
            both = CpuMeter({f"{side} {name}": pid for side, target in (("off", off), ("on", on))
                             for name, pid in target.pids().items()})

            def measure(side: str) -> tuple[float, float]:
                # Each round starts with every role of both deployments idle: what one round (or the scrape after
                # it) leaves a process doing is not counted into the next.
                wait_until_idle(both, limit_s=IDLE_LIMIT_S)
                if side == "on":
                    wall, check = observer.session(played, on, parties, spans=False, meter=meters["on"])
                    checks.append(check)
                    return wall, check.pop("cpu_s")
                meters["off"].start()
                wall = asyncio.run(play(off.topology, off.client_data))["wall_s"]
                return wall, sum(meters["off"].stop().values())

            load = [list(os.getloadavg())]  # the machine's other work meanwhile, beside the figures it blurs
            measured = alternate(pairs, measure)
            load.append(list(os.getloadavg()))
            seen, spans = observed_roles.spans_of_all(observer.receiver, known, pairs,
                                               sum(sum(check["reported"].values()) for check in checks))
    finally:
        observer.stop()
    reported: Counter[str] = sum((check.pop("reported") for check in checks), Counter())
    for check in warm:
        check.pop("reported")
        check.pop("cpu_s")
    span_check = {**observed_roles.check_counts(reported, None, spans), "sessions_seen": seen}
    cpu, wall = ratios(measured, "cpu_s"), ratios(measured, "wall_s")
    # The pairs' ratios move with the machine's load by more than the extra costs; its own work per call, measured
    # alone, times a round's messages, is the share they cannot resolve.
    progress("observe overhead: the interceptors' CPU per call, in process")
    per_call = observe_calls.run(message_type)
    messages = statistics.median(check["messages"] for check in checks)
    per_call["round_messages"] = messages
    per_call["share_of_round_cpu"] = per_call["extra_ms"]["on"] / 1e3 * messages / cpu["median_off"]
    return {"pairs": pairs, "warmup": warmup, "measured": measured, "cpu": cpu, "wall": wall,
            "target_ratio": TARGET_RATIO, "target_reads": TARGET_READS, "load_average": load,
            "met": cpu["median"] <= TARGET_RATIO, "per_call": per_call, "warmup_checks": warm, "checks": checks,
            "spans": span_check,
            "all_match": all(c["metrics_match"] for c in checks) and span_check["spans_match"] and seen == pairs
            and all(c["metrics_match"] and c.get("spans_match", True) for c in warm)}


class _Played:
    """A bench's round in the shape `observed_roles.Observer.session` plays (that of a `bench scale` session)."""

    def __init__(self, play: Round):
        self._play = play

    async def session(self, topology, client_data: dict, parties: int) -> dict:
        return await self._play(topology, client_data)


def _line(name: str, figures: dict) -> str:
    return (f"median of pairs {figures['median']:.3f} (lowest {figures['lowest']:.3f}, highest "
            f"{figures['highest']:.3f}; of the totals {figures['of_totals']:.3f}; medians {figures['median_off']:.2f} "
            f"→ {figures['median_on']:.2f} {name})")


def lines(report: dict) -> list[str]:
    """The section a bench prints."""
    if "skipped" in report:
        return [f"  observe overhead: not measured: {report['skipped']}"]
    cpu, wall, target = report["cpu"], report["wall"], report["target_ratio"]
    checks, spans = report["checks"], report["spans"]
    verdict = f"target ≤ {target:.2f} ({100 * (target - 1):.0f} %): {'met' if report['met'] else 'NOT met'}"
    return [
        f"  observe overhead ([observe] on: spans over OTLP and Prometheus, against off; {report['pairs']} pairs of "
        "rounds alternating between two deployments, same run; on/off"
        + (", load average {:.1f} → {:.1f}".format(*(load[0] for load in report["load_average"]))
           if report.get("load_average") else "") + "):",
        f"    role processes' CPU  {_line('CPU-s a round', cpu)}; {verdict}, read here",
        f"    round's wall time    {_line('s', wall)}; load-bound, not the target's",
        f"    counted: Prometheus calls = report messages, kind by kind, in {sum(c['metrics_match'] for c in checks)} "
        f"of {len(checks)} observed rounds; server spans = messages, all rounds together: "
        f"{'yes' if spans['spans_match'] else 'NO'} ({spans['server_spans']} spans, {spans['messages']} messages)",
        *([f"    the interceptors alone, in process: + {per_call['extra_ms']['on']:.3f} ms of CPU a call (a server and a "
           f"client span, their OTLP encoding, the counters) × {per_call['round_messages']:.0f} messages = "
           f"{per_call['extra_ms']['on'] * per_call['round_messages']:.1f} ms, {100 * per_call['share_of_round_cpu']:.2f} % "
           "of the roles' CPU a round without the extra (the OTLP sends and the scrapes not in it)"]
          if (per_call := report.get("per_call")) else []),
        *([f"    differences (kind, report, counted): {next(c['differences'] for c in [*checks, spans] if c['differences'])}"]
          if any(c["differences"] for c in [*checks, spans]) else []),
    ]
