"""`mpdp predict --report R --network PROFILE`: a session's wall time under another network, from its transcript.

The model replays the session's own message sequence (launcher.commands.trace's rows, each with the receiver's start
and end of the RPC). Every RPC is four events: the caller sends, the callee receives, the callee replies, the
caller has the answer. A receive waits for its send plus the link's one-way time for that many bytes (latency,
transmission at the bandwidth, expected loss as retransmission delay: mpdp.wire.profiles); every other event
a host does (a send, a reply) follows the last message the host received before it — a request, or an answer
that carries something (an empty answer is a delivery acknowledgement, not counted as what the host acted
on: the roles send their protocol messages without waiting on each other's acknowledgements, mostly; a
sender that does wait is under-estimated by a round trip per message) — after the same local time as measured (its computation, and any wait the measured run had on
that host). Under the measured profile this rebuilds the measured times; under another it gives the wall
time. Following each event's predecessor back from the last one gives the critical
path: its network crossings are the session's sequential one-way trips.

A caller's first RPC to a host on a fresh channel also pays its opening: a TLS 1.3 handshake (one round trip),
then gRPC's wait for the server's HTTP/2 SETTINGS frame, which the server sends once its side of the handshake
is done (one more: gRPC core starts no RPC on a connection before it, grpc/grpc#23636), before any byte of the
request. The client opens fresh channels every session; role hosts keep theirs between sessions, so the model
charges it for the client's channels only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from launcher.commands import trace
from mpdp.wire.profiles import LOOPBACK, NetworkProfile

KINDS = ("send", "receive", "reply", "answer")
OPENING_ROUND_TRIPS = 2  # a fresh channel's TLS 1.3 handshake and the server's HTTP/2 SETTINGS


@dataclass
class Event:
    kind: str
    host: str
    measured: float  # seconds from the session's first event, as measured
    row: dict
    network_from: "Event | None" = None  # a receive's send, an answer's reply
    bytes: int = 0
    handshake: bool = False
    local_from: "Event | None" = None  # what the host last heard before it (else its previous event)
    predicted: float = 0.0


@dataclass
class Prediction:
    profile: NetworkProfile
    measured_profile: NetworkProfile
    measured_wall_s: float | None
    transcript_span_s: float
    predicted_span_s: float
    critical_path: list[dict] = field(default_factory=list)
    local_seconds: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def predicted_wall_s(self) -> float:
        """The measured wall time with the transcript's change added (the client's work outside it unchanged)."""
        base = self.measured_wall_s if self.measured_wall_s is not None else self.transcript_span_s
        return base + self.predicted_span_s - self.transcript_span_s

    @property
    def sequential_trips(self) -> int:
        """Network crossings on the critical path under the predicted profile (two per round trip)."""
        return sum(step["crossings"] for step in self.critical_path)

    def to_json(self) -> dict:
        return {"profile": self.profile.to_json(), "measured_profile": self.measured_profile.to_json(),
                "measured_wall_s": self.measured_wall_s, "predicted_wall_s": round(self.predicted_wall_s, 4),
                "transcript_span_s": round(self.transcript_span_s, 4),
                "predicted_span_s": round(self.predicted_span_s, 4), "sequential_one_way_trips": self.sequential_trips,
                "critical_path": self.critical_path, "local_seconds_per_stage": self.local_seconds}


def measured_profile(report: dict) -> NetworkProfile:
    network = report.get("network")
    return NetworkProfile.from_json(network["profile"]) if network else LOOPBACK


def measured_wall(report: dict) -> float | None:
    """The client's wall time of the session as the report states it."""
    if "wall_s" in report:
        return float(report["wall_s"])
    timing = report.get("timing", {})
    for key in ("client_round_trip", "total", "protocol"):  # the client's whole session, opening included
        if isinstance(timing.get(key), (int, float)):
            return float(timing[key])
    return None


def _events(rows: list[dict], base: NetworkProfile) -> list[Event]:
    if any(not row.get("finished_ns") for row in rows):
        raise ValueError("this report's traffic log has no end times (finished_ns): write it again with this "
                         "version's `mpdp run PROTOCOL --report FILE`")
    origin = min(row["started_ns"] for row in rows)
    events: list[Event] = []
    opened: set[tuple[str, str]] = set()
    for row in rows:
        start, end = (row["started_ns"] - origin) / 1e9, (row["finished_ns"] - origin) / 1e9
        request, response = base.one_way_s(row["request_bytes"]), base.one_way_s(row["response_bytes"])
        if row.get("observed_by", "server") == "server":
            times = (start - request, start, end, end + response)
        else:
            times = (start, start + request, end - response, end)
        send, receive, reply, answer = (Event(kind, row["from"] if kind in ("send", "answer") else row["to"], t, row)
                                        for kind, t in zip(KINDS, times))
        receive.network_from, receive.bytes = send, row["request_bytes"]
        answer.network_from, answer.bytes = reply, row["response_bytes"]
        link = (row["from"], row["to"])
        if row["from"].startswith("client/") and link not in opened:
            receive.handshake = True
        opened.add(link)
        events += [send, receive, reply, answer]
    return events


def predict(report: dict, profile: NetworkProfile) -> Prediction:
    rows = trace.messages(report)
    if not rows:
        raise ValueError("this report's traffic log is empty")
    base = measured_profile(report)
    events = sorted(_events(rows, base), key=lambda e: (e.measured, KINDS.index(e.kind)))
    last: dict[str, Event] = {}
    heard: dict[str, Event] = {}  # each host's latest incoming message
    for event in events:
        if event.network_from is None:
            event.local_from = heard.get(event.host) or last.get(event.host)
        last[event.host] = event
        if event.kind == "receive" or (event.kind == "answer" and event.bytes > 0):
            heard[event.host] = event
    for event in events:  # in measured order: every predecessor is computed first
        if event.network_from is not None:
            # the measured local time before this send already holds the measured profile's opening
            handshake = OPENING_ROUND_TRIPS * (profile.rtt_s - base.rtt_s) if event.handshake else 0.0
            event.predicted = event.network_from.predicted + profile.one_way_s(event.bytes) + handshake
        elif event.local_from is not None:
            event.predicted = event.local_from.predicted + event.measured - event.local_from.measured
        else:
            event.predicted = event.measured
    first = min(events, key=lambda e: e.predicted)
    end = max(events, key=lambda e: e.predicted)
    span = max(e.measured for e in events) - min(e.measured for e in events)
    return Prediction(profile, base, measured_wall(report), span, end.predicted - first.predicted,
                      _critical_path(end, profile), _local_seconds(report.get("protocol", ""), events))


def _critical_path(end: Event, profile: NetworkProfile) -> list[dict]:
    """The chain of events that sets the end time, as consecutive steps: local work at a host, or a crossing."""
    chain: list[Event] = []
    event: Event | None = end
    while event is not None:
        chain.append(event)
        event = event.network_from or event.local_from
    chain.reverse()
    steps: list[dict] = []
    for earlier, later in zip(chain, chain[1:]):
        crossing = later.network_from is earlier
        label = later.row["rpc"]
        if steps and steps[-1]["rpc"] == label and steps[-1]["host"] == later.host and not crossing:
            steps[-1]["seconds"] += later.predicted - earlier.predicted
            continue
        steps.append({"rpc": label, "host": later.host if not crossing else f"{earlier.host} → {later.host}",
                      "crossings": int(crossing), "seconds": later.predicted - earlier.predicted})
    merged: list[dict] = []
    for step in steps:  # consecutive steps of one message kind folded into one line
        if merged and merged[-1]["rpc"] == step["rpc"]:
            merged[-1]["crossings"] += step["crossings"]
            merged[-1]["seconds"] += step["seconds"]
            merged[-1]["steps"] += 1
        else:
            merged.append({**step, "steps": 1})
    for step in merged:
        step["seconds"] = round(step["seconds"], 4)
    return merged


def _local_seconds(protocol: str, events: list[Event]) -> dict[str, dict[str, float]]:
    """Each role's measured local time (computation, and waits not on the network) per protocol stage."""
    table: dict[str, dict[str, float]] = {}
    for event in events:
        if event.local_from is None:
            continue
        stage = trace.stage_of(protocol, event.row["rpc"])
        role = event.host.split("/")[0]
        per_role = table.setdefault(stage, {})
        per_role[role] = round(per_role.get(role, 0.0) + event.measured - event.local_from.measured, 4)
    return table


def summary(prediction: Prediction, top: int = 12) -> str:
    p = prediction
    lines = [f"measured under {p.measured_profile.describe()}",
             f"predicted under {p.profile.describe()}",
             f"  wall time: measured {p.measured_wall_s:.3f} s, predicted {p.predicted_wall_s:.3f} s"
             if p.measured_wall_s is not None else f"  wall time: predicted {p.predicted_wall_s:.3f} s",
             f"  critical path: {p.sequential_trips} sequential one-way trips "
             f"({p.sequential_trips * p.profile.latency_ms:g} ms of latency); longest steps:"]
    for step in sorted(p.critical_path, key=lambda s: -s["seconds"])[:top]:
        where = f"{step['steps']}× {step['host']}" if step["steps"] > 1 else step["host"]
        lines.append(f"    {step['seconds']:8.3f} s  {step['rpc']:<40} {where} ({step['crossings']} crossings)")
    return "\n".join(lines)


def run(report_path: Path, profile: NetworkProfile, as_json: bool = False) -> int:
    report = json.loads(Path(report_path).read_text())
    prediction = predict(report, profile)
    print(json.dumps(prediction.to_json(), indent=1) if as_json else summary(prediction))
    return 0


def add_command(commands) -> None:
    from launcher.deployment.network import add_options, profile_of

    parser = commands.add_parser("predict", help="a session's wall time and critical path under another network "
                                                 "profile, from its report's transcript")
    parser.add_argument("--report", type=Path, required=True, help="a report written by `mpdp run … --report FILE`")
    parser.add_argument("--json", action="store_true", help="print the prediction as JSON")
    add_options(parser)

    def handler(args) -> int:
        return run(args.report, profile_of(args), args.json)

    parser.set_defaults(handler=handler)
