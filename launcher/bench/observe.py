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

from launcher.bench.deployment import deployment, synthetic_dataset
from launcher.bench.scale import AUX_POINTS, scaled
from launcher.progress import progress
from mpdp.observe.role import BASE_VARIABLE, offset

TARGET_RATIO = 1.03
SPAN_WAIT_S = 20.0  # the batch processor exports every 5 s (OTEL_BSP_SCHEDULE_DELAY's default)


@contextlib.contextmanager
def _environment(values: dict[str, str]):
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


def _reported(traffic: list[dict]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for row in traffic:
        counts[row["rpc"]] += row["messages"]
    return counts


def _check(reported: Counter[str], scraped: Counter[tuple[str, str]], spans: Counter[tuple[str, str]]) -> dict:
    """Kind by kind: the calls the role endpoints answered OK and the session's server spans, against the report's
    messages."""
    metric_ok = Counter({kind: n for (kind, status), n in scraped.items() if status == "OK" and n and kind != COLLECTION})
    server_spans = Counter({kind: n for (side, kind), n in spans.items() if side == "server" and kind != COLLECTION})
    kinds = sorted(set(reported) | set(metric_ok) | set(server_spans))
    return {"messages": sum(reported.values()), "metric_calls": sum(metric_ok.values()),
            "server_spans": sum(server_spans.values()),
            "client_spans": sum(n for (side, kind), n in spans.items() if side == "client" and kind != COLLECTION),
            "metrics_match": metric_ok == reported, "spans_match": server_spans == reported,
            "differences": [[kind, reported[kind], metric_ok[kind], server_spans[kind]] for kind in kinds
                            if not reported[kind] == metric_ok[kind] == server_spans[kind]]}


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


def run(protocol: str = "dppp", parties: int = 5, bits: int = 1024, sessions: int = 10, seed: int = 1) -> dict:
    from launcher.deployment.processes import free_port, free_ports
    from mpdp.observe import sink

    entries = scaled()
    if protocol not in entries:
        raise ValueError(f"unknown protocol {protocol!r}; choose from {', '.join(entries)}")
    if sessions < 1:
        raise ValueError("--sessions must be at least 1")
    scale = entries[protocol]
    rows = scale.rows_per_party * parties * 3 // 2 + 3 * AUX_POINTS
    dataset = synthetic_dataset(2, rows, seed)
    options: dict[str, Any] = {"model": "logistic", "single_operator": True}
    if scale.public_points:
        options["aux_fraction"] = AUX_POINTS / (rows * 2 / 3)
    receiver_port = free_port()
    server, receiver = sink.start(receiver_port)
    base = _metrics_base(parties, free_ports)
    observed_env = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver_port}",
                    "OTEL_EXPORTER_OTLP_INSECURE": "true", BASE_VARIABLE: str(base)}
    walls: dict[str, list[float]] = {"off": [], "on": []}
    checks = []
    try:
        progress(f"{protocol}: starting two deployments of {parties} parties ({bits}-bit keys), observe off and on")
        with _environment({name: "" for name in observed_env}), \
                deployment(parties, bits, dataset, seed=seed, **options) as off:
            with _environment(observed_env), deployment(parties, bits, dataset, seed=seed, **options) as on:
                targets = {"off": off, "on": on}
                for name in ("off", "on"):  # warm-up: imports, tables, teachers
                    known = set(receiver.sessions())
                    result = asyncio.run(scale.session(targets[name].topology, targets[name].client_data, parties))
                # The observed warm-up's spans are all in before the first measured session is told apart by them.
                _session_spans(receiver, known, sum(_reported(result["traffic"]).values()))
                for number in range(sessions):
                    for name in (("off", "on") if number % 2 == 0 else ("on", "off")):
                        target = targets[name]
                        scraped_before = scrape(on.topology, base) if name == "on" else Counter()
                        known = set(receiver.sessions())
                        result = asyncio.run(scale.session(target.topology, target.client_data, parties))
                        walls[name].append(result["wall_s"])
                        if name == "on":
                            reported = _reported(result["traffic"])
                            spans = _session_spans(receiver, known, sum(reported.values()))
                            scraped = scrape(on.topology, base)
                            scraped.subtract(scraped_before)
                            checks.append(_check(reported, scraped, spans))
                    progress(f"pair {number + 1}/{sessions}: off {walls['off'][-1]:.2f} s, on {walls['on'][-1]:.2f} s")
    finally:
        server.stop(None)
    off_s, on_s = statistics.median(walls["off"]), statistics.median(walls["on"])
    return {"protocol": protocol, "parties": parties, "bits": bits, "sessions_each": sessions,
            "cores": os.cpu_count(), "load_average": list(os.getloadavg()),
            "wall_s": walls, "median_off_s": off_s, "median_on_s": on_s, "ratio": on_s / off_s,
            "target_ratio": TARGET_RATIO, "checks": checks,
            "all_match": all(c["metrics_match"] and c["spans_match"] for c in checks)}


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


def summary(report: dict) -> str:
    checks = report["checks"]
    lines = [
        f"observe overhead, {report['protocol']} at K = {report['parties']} ({report['bits']}-bit keys), "
        f"{report['sessions_each']} sessions each way, alternating, {report['cores']} cores, load "
        + ", ".join(f"{x:.1f}" for x in report["load_average"]),
        f"  median wall: off {report['median_off_s']:.3f} s, on {report['median_on_s']:.3f} s",
        f"  ratio on/off: {report['ratio']:.3f} (target ≤ {report['target_ratio']:.2f}: "
        f"{'met' if report['ratio'] <= report['target_ratio'] else 'NOT met'})",
        f"  every observed session: Prometheus calls = report messages: "
        f"{sum(c['metrics_match'] for c in checks)} of {len(checks)}; server spans = report messages: "
        f"{sum(c['spans_match'] for c in checks)} of {len(checks)} ({checks[0]['messages'] if checks else 0} "
        "messages a session)",
    ]
    for check in checks:
        if check["differences"]:
            lines.append(f"  differences (kind, report, metrics, spans): {check['differences']}")
            break
    return "\n".join(lines)


def add_parser(targets) -> None:
    """`mpdp bench observe` under `mpdp bench`."""
    from pathlib import Path

    from launcher.options import key_bits

    bench = targets.add_parser("observe", help="a session's wall time with the [observe] extra on vs off (same "
                                               "run), and its counts against the report")
    bench.add_argument("--protocol", default="dppp", help="dppp (default), pathak, du or hamm")
    bench.add_argument("--parties", type=int, default=5)
    bench.add_argument("--bits", type=key_bits, default=1024)
    bench.add_argument("--sessions", type=int, default=10, help="measured sessions each way (default 10)")
    bench.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    bench.set_defaults(handler=_handle)


def _handle(args) -> int:
    from launcher.options import warn_small_key, write_json
    from mpdp.observe import ExtraMissing, metrics_available, tracing_available

    if not (tracing_available() and metrics_available()):
        raise ExtraMissing("mpdp bench observe")
    warn_small_key(args.bits)
    report = run(args.protocol, args.parties, args.bits, args.sessions)
    print(summary(report))
    write_json(args.json, report)
    args.json_report = report
    return 0 if report["all_match"] else 1
