"""The observed deployment the benches measure: the counting span receiver, the roles' metrics endpoints, the
counts of both against a session's report, and the signals that switch its roles' interceptors off and on
(`mpdp bench observe`, and the overhead section of a protocol's bench). Knows no protocol."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
import urllib.request
from collections import Counter
from typing import Any

from mpdp.observe.role import BASE_VARIABLE, PORT_VARIABLE, offset

TARGET_RATIO = 1.03
SPAN_WAIT_S = 20.0  # the batch processor exports every 5 s (OTEL_BSP_SCHEDULE_DELAY's default)
SWITCH_WAIT_S = 10.0  # a signal is taken at once; the endpoints answer within a scrape


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


def _samples(topology, base: int):
    """(host principal, sample) for every sample every role host's endpoint serves."""
    from prometheus_client.parser import text_string_to_metric_families

    for entry in topology.host_entries:
        url = f"http://127.0.0.1:{base + offset(str(entry.principal))}/metrics"
        with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 (loopback, our own endpoint)
            text = answer.read().decode()
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                yield str(entry.principal), sample


def scrape(topology, base: int) -> Counter[tuple[str, str]]:
    """(kind, status) → calls answered, summed over every role host's endpoint."""
    counts: Counter[tuple[str, str]] = Counter()
    for _, sample in _samples(topology, base):
        if sample.name == "mpdp_rpc_calls_total":
            counts[(sample.labels["kind"], sample.labels["status"])] += int(sample.value)
    return counts


def switched(topology, base: int) -> dict[str, bool]:
    """Each role host's observe switch as its endpoint reports it (mpdp_observe_on)."""
    return {principal: sample.value == 1 for principal, sample in _samples(topology, base)
            if sample.name == "mpdp_observe_on"}


def switch(target, on: bool, base: int, limit_s: float = SWITCH_WAIT_S) -> float:
    """Every role process of `target` (pids from its run directory) switched on or off by its signal
    (mpdp/observe/switch.py); returns once every endpoint reports the new state, the seconds that took."""
    from mpdp.observe.switch import OFF_SIGNAL, ON_SIGNAL

    started = time.monotonic()
    for pid in target.pids().values():
        os.kill(pid, ON_SIGNAL if on else OFF_SIGNAL)
    while True:
        states = switched(target.topology, base)
        if len(states) == len(target.topology.host_entries) and all(state == on for state in states.values()):
            return time.monotonic() - started
        if time.monotonic() - started > limit_s:
            raise RuntimeError(f"observe switch {'on' if on else 'off'} ({signal.Signals(ON_SIGNAL if on else OFF_SIGNAL).name}"
                               f") not taken within {limit_s:.0f} s: {states}")
        time.sleep(0.05)


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
                            "OTEL_EXPORTER_OTLP_INSECURE": "true", BASE_VARIABLE: str(self.base),
                            PORT_VARIABLE: ""}  # one port for all would win over the base (role.metrics_port_of)
        if export_delay_ms is not None:
            self.environment["OTEL_BSP_SCHEDULE_DELAY"] = str(export_delay_ms)

    def session(self, scale, target, parties: int, spans: bool = True, meter=None,
                tail_s: float = 0.0) -> tuple[float, dict]:
        """One session on the observed deployment: its wall time, its counts against its report. `spans` False:
        its spans are not waited for (they are exported while later sessions run, as in use), only its metrics
        are checked here. `tail_s`: the meter goes on that long after the session's answer (its spans' export)."""
        scraped_before = scrape(target.topology, self.base)
        known = set(self.receiver.sessions())
        if meter is not None:  # the roles' CPU over the session alone, not over the scrapes around it
            meter.start()
        result = asyncio.run(scale.session(target.topology, target.client_data, parties))
        if meter is not None and tail_s:
            time.sleep(tail_s)
        by_process = meter.stop() if meter is not None else {}
        cpu = sum(by_process.values()) if meter is not None else None
        reported = reported_counts(result["traffic"])
        scraped = scrape(target.topology, self.base)
        scraped.subtract(scraped_before)
        arrived = _session_spans(self.receiver, known, sum(reported.values())) if spans else None
        return result["wall_s"], {**check_counts(reported, scraped, arrived), "reported": reported, "cpu_s": cpu,
                                  **({"cpu_s_by_process": by_process} if by_process else {})}

    def stop(self) -> None:
        self.server.stop(None)


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
