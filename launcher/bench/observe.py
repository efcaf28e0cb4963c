"""`mpdp bench observe`: what the `[observe]` extra costs a session, and whether it counts what the report counts.

Two deployments of real role processes run side by side on loopback, alike but for the extra: one exports a span
per RPC on each side over OTLP/gRPC (to a counting receiver in this process) and serves Prometheus metrics; the
other has neither. Sessions alternate between them (off, on, then on, off, …, so that drift in the machine's
load falls on both), and the figure is the ratio of their median wall times, measured in one run. After each
observed session the role endpoints are scraped and the spans counted: both must equal the report's traffic,
kind by kind."""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import time
import urllib.request
from collections import Counter
from typing import Any

from launcher.bench.deployment import CpuMeter, deployment, synthetic_dataset
from launcher.bench.scale import AUX_POINTS, scaled
from launcher.common.progress import progress
from mpdp.observe.role import BASE_VARIABLE, offset

TARGET_RATIO = 1.03
SPAN_WAIT_S = 20.0  # the batch processor exports every 5 s (OTEL_BSP_SCHEDULE_DELAY's default)


@contextlib.contextmanager
def environment(values: dict[str, str]):
    """Variables the role processes started inside inherit; the previous values back afterwards."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def scrape(topology, base: int) -> Counter[tuple[str, str]]:
    """(kind, status) → calls answered, summed over every role host's endpoint."""
    from prometheus_client.parser import text_string_to_metric_families

    counts: Counter[tuple[str, str]] = Counter()
    for entry in topology.host_entries:
        url = f"http://127.0.0.1:{base + offset(str(entry.principal))}/metrics"
        with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 (loopback, our own endpoint)
            text = answer.read().decode()
        for family in text_string_to_metric_families(text):
            if family.name == "mpdp_rpc_calls":
                for sample in family.samples:
                    if sample.name == "mpdp_rpc_calls_total":
                        counts[(sample.labels["kind"], sample.labels["status"])] += int(sample.value)
    return counts


# The report's own collection of each role's records, made after the session: not in the report's traffic.
COLLECTION = "GetTraffic"


def reported_counts(traffic: list[dict]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for row in traffic:
        counts[row["rpc"]] += row["messages"]
    return counts


def _server_spans(spans: Counter[tuple[str, str]]) -> Counter[str]:
    return Counter({kind: n for (side, kind), n in spans.items() if side == "server" and kind != COLLECTION})


def check_counts(reported: Counter[str], scraped: Counter[tuple[str, str]] | None,
           spans: Counter[tuple[str, str]] | None) -> dict:
    """Kind by kind: the calls the role endpoints answered OK and the server spans (each when given), against the
    report's messages."""
    check: dict[str, Any] = {"messages": sum(reported.values())}
    found = {}
    if scraped is not None:
        found["metrics"] = Counter({kind: n for (kind, status), n in scraped.items()
                                    if status == "OK" and n and kind != COLLECTION})
        check["metric_calls"] = sum(found["metrics"].values())
    if spans is not None:
        found["spans"] = _server_spans(spans)
        check["server_spans"] = sum(found["spans"].values())
        check["client_spans"] = sum(n for (side, kind), n in spans.items() if side == "client" and kind != COLLECTION)
    for name, counts in found.items():
        check[f"{name}_match"] = counts == reported
    kinds = sorted(set(reported).union(*found.values()))
    check["differences"] = [[kind, reported[kind], *(counts[kind] for counts in found.values())] for kind in kinds
                            if any(counts[kind] != reported[kind] for counts in found.values())]
    return check


def _session_spans(receiver, known: set[str], expected: int) -> Counter:
    """The spans of the session not in `known` (the one just run), once its server spans reach `expected` (or the
    wait ends). Every earlier session was waited for in turn, so the one just run is the only new one."""
    deadline = time.monotonic() + SPAN_WAIT_S
    while True:
        new = {session: counts for session, counts in receiver.sessions().items() if session and session not in known}
        session, arrived = max(new.items(), key=lambda item: sum(item[1].values()), default=("", Counter()))
        server = sum(n for (side, kind), n in arrived.items() if side == "server" and kind != COLLECTION)
        if server >= expected or time.monotonic() > deadline:
            time.sleep(0.5)  # a straggler past the count shows as a mismatch rather than being missed
            return receiver.sessions().get(session, Counter())
        time.sleep(0.2)


class Observer:
    """The counting span receiver and the observed deployment's metrics base: the environment its roles get."""

    def __init__(self, parties: int, export_delay_ms: int | None = None):
        from launcher.deployment.children import free_port, free_ports
        from mpdp.observe import sink

        port = free_port()
        self.server, self.receiver = sink.start(port)
        self.base = _metrics_base(parties, free_ports)
        self.environment = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
                            "OTEL_EXPORTER_OTLP_INSECURE": "true", BASE_VARIABLE: str(self.base)}
        if export_delay_ms is not None:
            self.environment["OTEL_BSP_SCHEDULE_DELAY"] = str(export_delay_ms)

    def session(self, scale, target, parties: int, spans: bool = True, meter=None) -> tuple[float, dict]:
        """One session on the observed deployment: its wall time, its counts against its report. `spans` False:
        its spans are not waited for (they are exported while later sessions run, as in use), only its metrics
        are checked here."""
        scraped_before = scrape(target.topology, self.base)
        known = set(self.receiver.sessions())
        if meter is not None:  # the roles' CPU over the session alone, not over the scrapes around it
            meter.start()
        result = asyncio.run(scale.session(target.topology, target.client_data, parties))
        cpu = sum(meter.stop().values()) if meter is not None else None
        reported = reported_counts(result["traffic"])
        scraped = scrape(target.topology, self.base)
        scraped.subtract(scraped_before)
        arrived = _session_spans(self.receiver, known, sum(reported.values())) if spans else None
        return result["wall_s"], {**check_counts(reported, scraped, arrived), "reported": reported, "cpu_s": cpu}

    def stop(self) -> None:
        self.server.stop(None)


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

    progress("the interceptors' CPU per call, in process")
    per_call = observe_calls.run()
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


def spans_of_all(receiver, known: set[str], sessions: int, expected: int) -> tuple[int, Counter]:
    """After the measured sessions: the observed ones' spans summed (the sessions new since `known`, once their
    server spans reach `expected` or the wait ends), and how many sessions they came from."""
    deadline = time.monotonic() + SPAN_WAIT_S
    while True:
        new = [counts for session, counts in receiver.sessions().items() if session and session not in known]
        total: Counter[tuple[str, str]] = sum(new, Counter())
        if sum(_server_spans(total).values()) >= expected or time.monotonic() > deadline:
            time.sleep(0.5)
            new = [counts for session, counts in receiver.sessions().items() if session and session not in known]
            return len(new), sum(new, Counter())
        time.sleep(0.2)


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


def _metrics_base(parties: int, free_ports) -> int:
    """A base port whose BASE … BASE + 1 + K are all free (the observed deployment's endpoints)."""
    import socket

    for base in free_ports(20):
        if base + parties + 2 > 65535:
            continue
        probes = []
        try:
            for port in range(base, base + parties + 2):
                probe = socket.socket()
                probes.append(probe)
                probe.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for probe in probes:
                probe.close()
    raise OSError("no run of free ports for the metrics endpoints")


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
