"""What the `[observe]` extra costs a protocol bench's own round, measured in the bench's run (`mpdp bench dppp`
prints it beside its other figures).

One deployment is started with the extra installed (a span per RPC on each side, exported over OTLP/gRPC to a
counting receiver in this process, and a Prometheus endpoint per role), and its roles' interceptors are switched
off and on between rounds by signal (mpdp/observe/switch.py). Rounds alternate in pairs, off then on, then on then
off, …, so that drift in the machine's load falls on both alike, and both sides run in the same processes with the
same caches and warm state. Each round starts once every role process has fallen idle. Each pair gives a ratio
on/off of the CPU seconds of all role processes (summed, read from /proc, over the round and a tail long enough for
the batch processor to export the round's spans; the scrapes around it are outside) and of the round's wall time;
the figure is the median of the pairs' ratios, printed with their lowest and highest and their interquartile range.

"Off" is the extra installed but switched off: each interceptor reads its flag and hands the call on, and the
exporters idle (the batch processor's thread, the OTLP channel, the /metrics listener). Those flag checks are
measured in process and printed. The ≤ 3 % target reads the CPU ratio: the machine is shared, and a round's wall
time moves with the other jobs' load by far more than 3 %, the CPU the roles spend much less. Every round is also
counted: the calls the role endpoints answered over an observed round must equal its report's messages kind by
kind, and so must the server spans received for it; over a round switched off, the endpoints must count nothing
and no span arrive. Last, the interceptors' CPU per call in process (observe_calls.py) times a round's messages
gives their own share."""

from __future__ import annotations

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
# Rounds before the pairs, at least: a fresh deployment's first round builds its tables, and its second cost every
# party 0.1–0.3 CPU-s more than the rounds after it (in two runs on this machine, as the first pair's first side).
WARMUP = 2
# At most this long for the roles to fall idle before a round: long enough for what a warm-up round leaves them
# doing (teachers' pools, their models), which a round begun earlier would count as its own.
IDLE_LIMIT_S = 60.0
# A round's CPU is read this long after its answer on both sides, past the batch processor's next export, so that
# its spans' export is inside it: OTEL_BSP_SCHEDULE_DELAY (5 s by default, a real deployment's) and a margin.
EXPORT_MARGIN_S = 0.5


def export_tail_s(environ=os.environ) -> float:
    return float(environ.get("OTEL_BSP_SCHEDULE_DELAY") or 5000) / 1e3 + EXPORT_MARGIN_S

# One round on a deployment's topology with its client data → {"wall_s": …, "traffic": the report's rows}.
Round = Callable[[Any, dict], Coroutine[Any, Any, dict]]


def skipped_because() -> str | None:
    """Why the overhead cannot be measured here, or None: the extra must be installed, and this process must not
    be asked to export spans itself (its own client spans would be counted with the roles')."""
    from mpdp.observe import metrics_available, tracing_available
    from mpdp.observe.exporting import requested

    if not (tracing_available() and metrics_available()):
        return "the [observe] extra is not installed (pip install 'mpdp[observe]')"
    if requested():
        return "the bench itself is observed (OTEL_TRACES_EXPORTER set)"
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
    """On/off of one measure: each pair's, their median, extremes and interquartile range, and the ratios of the
    two sides' medians and totals."""
    on, off = measured["on"][what], measured["off"][what]
    per_pair = [a / b for a, b in zip(on, off)]
    quartiles = statistics.quantiles(per_pair, n=4) if len(per_pair) > 1 else [per_pair[0]] * 3
    return {"per_pair": per_pair, "median": statistics.median(per_pair), "lowest": min(per_pair),
            "highest": max(per_pair), "quartiles": [quartiles[0], quartiles[2]],
            "median_off": statistics.median(off), "median_on": statistics.median(on),
            "of_medians": statistics.median(on) / statistics.median(off), "of_totals": sum(on) / sum(off)}


def run(start: Callable[[], AbstractContextManager[Deployment]], play: Round, parties: int, pairs: int,
        message_type, warmup: int = 1) -> dict:
    """`start()` starts a deployment (inside the variables that install the extra); `play` is the bench's round;
    `message_type` the protocol's message, which the per-call measurement carries. `warmup` rounds switched on
    first (its fixed-base tables are cold), the first one's spans waited for and counted."""
    if pairs < 1:
        raise ValueError("observe overhead: at least one pair of rounds")
    reason = skipped_because()
    if reason is not None:
        return {"skipped": reason}
    observer = observed_roles.Observer(parties)
    played = _Played(play)
    checks: dict[str, list[dict]] = {"off": [], "on": []}
    switching: list[float] = []
    idle: dict[str, list[list[float]]] = {"off": [], "on": []}  # (seconds waited, CPU seconds meanwhile) a round
    tail_s = export_tail_s()
    try:
        progress(f"observe overhead: starting a deployment of {parties} parties with the [observe] extra installed")
        with observed_roles.environment(observer.environment), start() as target:
            warm = [observer.session(played, target, parties, spans=number == 0)[1] for number in range(warmup)]
            known = set(observer.receiver.sessions())
            meter = CpuMeter(target.pids())

            def measure(side: str) -> tuple[float, float]:
                switching.append(observed_roles.switch(target, side == "on", observer.base))
                # Each round starts with every role idle: what one round (its export, the scrape after it, the
                # switch) leaves a process doing is not counted into the next.
                idle[side].append(list(wait_until_idle(meter, limit_s=IDLE_LIMIT_S)))
                wall, check = observer.session(played, target, parties, spans=side == "on", meter=meter,
                                               tail_s=tail_s)
                checks[side].append(check)
                return wall, check.pop("cpu_s")

            load = [list(os.getloadavg())]  # the machine's other work meanwhile, beside the figures it blurs
            measured = alternate(pairs, measure)
            load.append(list(os.getloadavg()))
            observed_roles.switch(target, True, observer.base)  # as it started
            seen = len([session for session in observer.receiver.sessions() if session and session not in known])
    finally:
        observer.stop()
    for check in [*warm, *checks["off"], *checks["on"]]:
        check.pop("cpu_s", None)
    reported: Counter[str] = sum((check.pop("reported") for check in checks["on"]), Counter())
    for check in [*warm, *checks["off"]]:
        check.pop("reported")
    # Switched off, a round is neither counted nor spanned: the endpoints' calls did not move, and the only
    # sessions with spans are the observed ones.
    off = {"rounds": len(checks["off"]), "metric_calls": sum(check["metric_calls"] for check in checks["off"]),
           "sessions_with_spans": seen - len(checks["on"])}
    off["nothing_counted"] = off["metric_calls"] == 0 and off["sessions_with_spans"] == 0
    totals = {"messages": sum(reported.values()), "metric_calls": sum(c["metric_calls"] for c in checks["on"]),
              "server_spans": sum(c["server_spans"] for c in checks["on"])}
    cpu, wall = ratios(measured, "cpu_s"), ratios(measured, "wall_s")
    progress("observe overhead: the interceptors' CPU per call, in process")
    per_call = observe_calls.run(message_type)
    messages = statistics.median(check["messages"] for check in checks["on"])
    per_call["round_messages"] = messages
    per_call["share_of_round_cpu"] = per_call["extra_ms"]["on"] / 1e3 * messages / cpu["median_off"]
    per_call["flag_checks"]["share_of_round_cpu"] = (per_call["flag_checks"]["extra_us"] / 1e6 * messages
                                                     / cpu["median_off"])
    return {"pairs": pairs, "warmup": warmup, "same_deployment": True, "export_tail_s": tail_s,
            "measured": measured, "cpu": cpu, "wall": wall, "target_ratio": TARGET_RATIO,
            "target_reads": TARGET_READS, "load_average": load, "met": cpu["median"] <= TARGET_RATIO,
            "per_call": per_call, "switch_s": switching, "idle_waits": idle, "warmup_checks": warm, "checks": checks["on"],
            "off_checks": checks["off"], "off": off, "totals": totals,
            "all_match": all(c["metrics_match"] and c["spans_match"] for c in checks["on"]) and off["nothing_counted"]
            and all(c["metrics_match"] and c.get("spans_match", True) for c in warm)}


class _Played:
    """A bench's round in the shape `observed_roles.Observer.session` plays (that of a `bench scale` session)."""

    def __init__(self, play: Round):
        self._play = play

    async def session(self, topology, client_data: dict, parties: int) -> dict:
        return await self._play(topology, client_data)


def _line(name: str, figures: dict) -> str:
    low, high = figures.get("quartiles", [figures["lowest"], figures["highest"]])
    return (f"median of pairs {figures['median']:.3f} (lowest {figures['lowest']:.3f}, highest "
            f"{figures['highest']:.3f}, quartiles {low:.3f}–{high:.3f}; of the totals {figures['of_totals']:.3f}; "
            f"medians {figures['median_off']:.2f} → {figures['median_on']:.2f} {name})")


def lines(report: dict) -> list[str]:
    """The section a bench prints."""
    if "skipped" in report:
        return [f"  observe overhead: not measured: {report['skipped']}"]
    cpu, wall, target = report["cpu"], report["wall"], report["target_ratio"]
    checks, off, totals = report["checks"], report["off"], report["totals"]
    verdict = f"target ≤ {target:.2f} ({100 * (target - 1):.0f} %): {'met' if report['met'] else 'NOT met'}"
    per_call = report.get("per_call")
    return [
        f"  observe overhead ([observe] switched on: spans over OTLP and Prometheus, against switched off; "
        f"{report['pairs']} pairs of rounds in one deployment, switched by signal between rounds; on/off"
        + (", load average {:.1f} → {:.1f}".format(*(load[0] for load in report["load_average"]))
           if report.get("load_average") else "") + "):",
        f"    role processes' CPU  {_line('CPU-s a round', cpu)}; {verdict}, read here",
        f"    round's wall time    {_line('s', wall)}; load-bound, not the target's",
        f"    counted, each observed round: Prometheus calls = report messages = server spans, kind by kind, in "
        f"{sum(c['metrics_match'] and c['spans_match'] for c in checks)} of {len(checks)} "
        f"({totals['metric_calls']} calls, {totals['server_spans']} spans, {totals['messages']} messages); "
        f"switched off: {off['metric_calls']} calls counted and {off['sessions_with_spans']} sessions spanned "
        f"over {off['rounds']} rounds",
        *([f"    \"off\" still runs the interceptors' flag checks: {per_call['flag_checks']['extra_us']:+.2f} µs of CPU a "
           f"call in process, {100 * per_call['flag_checks']['share_of_round_cpu']:.4f} % of a round; and its "
           "exporters idle (the batch processor's thread, the OTLP channel, the /metrics listener)"]
          if per_call and "flag_checks" in per_call else []),
        *([f"    the interceptors alone, in process: + {per_call['extra_ms']['on']:.3f} ms of CPU a call (a server and a "
           f"client span, their OTLP encoding, the counters) × {per_call['round_messages']:.0f} messages = "
           f"{per_call['extra_ms']['on'] * per_call['round_messages']:.1f} ms, {100 * per_call['share_of_round_cpu']:.2f} % "
           "of the roles' CPU a round switched off (the OTLP sends and the scrapes not in it)"]
          if per_call else []),
        *([f"    differences (kind, report, counted): {next(c['differences'] for c in checks if c['differences'])}"]
          if any(c["differences"] for c in checks) else []),
    ]
