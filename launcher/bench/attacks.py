"""Attacking a running deployment as a hostile client would: fuzzed RPCs, resource growth over many
sessions, and faults. Used by `mpdp bench hardening` and `tests/hardening/`.

Every call is made over mutual TLS with some role's certificate (the right one or a wrong one), so a
refusal is the role's own answer, not the handshake's.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from launcher.common.client import to_role
from launcher.deployment import processes
from launcher.protocol import Hardening, HardeningTarget
from mpdp.deployments.topology import Topology
from mpdp.privacy.ledger import UNLIMITED
from mpdp.proto.v1 import role_pb2
from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, Identity
from mpdp.wire.tls import target_options

# What a role may answer; anything else (UNKNOWN, INTERNAL, …) is a defect.
DEFINED_STATUSES = frozenset({"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "PERMISSION_DENIED", "ABORTED",
                              "RESOURCE_EXHAUSTED"})
HANG_S = 10.0
# RPCs that legitimately wait for a session (long polls): fuzzed with unknown or finished sessions only.
_LONG_POLLS = {"AwaitResult"}
_CASE_KINDS = ("structured", "mutated", "random bytes")


@dataclass
class RpcFuzzStats:
    sent: int = 0
    statuses: Counter = field(default_factory=Counter)
    hangs: int = 0
    undefined: int = 0

    def to_dict(self) -> dict:
        return {"sent": self.sent, "statuses": dict(self.statuses), "hangs": self.hangs, "undefined": self.undefined}


@dataclass
class Target:
    identity: Identity
    method: str  # e.g. "Step"
    request_class: type

    @property
    def path(self) -> str:
        return f"/mpdp.v1.Role/{self.method}"


def targets(topology: Topology) -> list[Target]:
    """Every unary RPC of every role in the topology, with its request type."""
    found = []
    service = role_pb2.DESCRIPTOR.services_by_name["Role"]
    for entry in topology.roles:
        for method in service.methods:
            request_class = _message_class(method.input_type.full_name)
            found.append(Target(entry.identity, method.name, request_class))
    return found


def _message_class(full_name: str) -> type:
    from google.protobuf import symbol_database

    return symbol_database.Default().GetSymbol(full_name)


@dataclass
class FuzzContext:
    session_ids: list[str]  # open, finished and unknown ones
    finished_ids: list[str]
    ciphertext_bytes: int
    parties: int


def _scalar(field_descriptor, rng: random.Random, context: FuzzContext):
    kind = field_descriptor.type
    fd = field_descriptor
    if kind == fd.TYPE_BYTES:
        length = context.ciphertext_bytes
        return rng.choice([b"", rng.randbytes(length), b"\x00" * length, b"\xff" * length, rng.randbytes(32),
                           rng.randbytes(rng.randrange(1, 700)), b"\x01" + b"\x00" * (length - 1)])
    if kind == fd.TYPE_STRING:
        return rng.choice(["", "x" * rng.randrange(1, 300), "party/1", "l2-laplace", "gaussian", "tight",
                           "\n\x00\u202e", rng.choice(context.session_ids)])
    if kind == fd.TYPE_BOOL:
        return rng.random() < 0.5
    if kind == fd.TYPE_ENUM:  # an enum holds int32 values: each declared one, unknown ones and the extremes
        return rng.choice([value.number for value in fd.enum_type.values] + [rng.randrange(0, 1000), 2**31 - 1, -1])
    if kind in (fd.TYPE_DOUBLE, fd.TYPE_FLOAT):
        return rng.choice([0.0, -1.0, 1.0, 1e-300, 1e300, math.inf, -math.inf, math.nan, rng.uniform(0, 10)])
    signed = kind in (fd.TYPE_INT32, fd.TYPE_INT64, fd.TYPE_SINT32, fd.TYPE_SINT64, fd.TYPE_SFIXED32,
                      fd.TYPE_SFIXED64)
    wide = kind in (fd.TYPE_INT64, fd.TYPE_UINT64, fd.TYPE_SINT64, fd.TYPE_FIXED64, fd.TYPE_SFIXED64)
    top = 2**63 - 1 if wide else 2**31 - 1
    choices = [0, 1, 2, context.parties, context.parties + 1, rng.randrange(0, 1000), top]
    if signed:
        choices += [-1, -top]
    elif not wide:
        choices += [2**32 - 1]
    return rng.choice(choices)


def fill(message, rng: random.Random, context: FuzzContext, depth: int = 0) -> None:
    """Random values of the right types in a protobuf message: one member of each oneof, bytes of ciphertext
    size and of wrong sizes, extreme numbers, known, finished and unknown session ids."""
    descriptor = message.DESCRIPTOR
    chosen = {oneof.name: rng.choice(list(oneof.fields)) for oneof in descriptor.oneofs}
    for fd in descriptor.fields:
        if fd.containing_oneof is not None and chosen[fd.containing_oneof.name] is not fd:
            continue
        if fd.containing_oneof is None and rng.random() < 0.15:
            continue  # left unset
        repeated = fd.is_repeated
        if fd.type == fd.TYPE_MESSAGE:
            if depth > 3:
                continue
            if repeated:
                for _ in range(rng.choice([0, 1, 2, context.parties])):
                    fill(getattr(message, fd.name).add(), rng, context, depth + 1)
            else:
                child = getattr(message, fd.name)
                child.SetInParent()
                fill(child, rng, context, depth + 1)
            continue
        if fd.name == "session_id":
            message.session_id = rng.choice(context.session_ids)
        elif fd.name in ("sender", "receiver") and not repeated and fd.type == fd.TYPE_STRING:  # mostly real roles,
            # so checks past addressing run
            setattr(message, fd.name, rng.choice(["client/0", "aggregator/0", "curator/0", "party/0", "x",
                                                  f"party/{rng.randrange(1, context.parties + 2)}"]))
        elif repeated:
            getattr(message, fd.name).extend(_scalar(fd, rng, context) for _ in range(rng.choice([0, 1, 3, 30])))
        else:
            setattr(message, fd.name, _scalar(fd, rng, context))


def make_case(target: Target, rng: random.Random, context: FuzzContext) -> tuple[str, bytes]:
    """(kind, request bytes) for one fuzz case."""
    kind = rng.choice(_CASE_KINDS)
    message = target.request_class()
    fill(message, rng, context)
    if target.method in _LONG_POLLS and hasattr(message, "session_id"):
        message.session_id = rng.choice(context.finished_ids + ["unknown-" + rng.randbytes(4).hex()])
        message.ClearField("body")  # delivering a body would open (and wait for) a real session
    data = message.SerializeToString()
    if kind == "mutated" and data:
        data = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            operation = rng.randrange(3)
            position = rng.randrange(len(data)) if data else 0
            if operation == 0 and data:
                data[position] = rng.randrange(256)
            elif operation == 1:
                del data[position:position + rng.randrange(1, 8)]
            else:
                data[position:position] = rng.randbytes(rng.randrange(1, 16))
        data = bytes(data)
    elif kind == "random bytes":
        data = rng.randbytes(rng.randrange(0, 300))
    return kind, data


class Caller:
    """One mTLS channel per (caller identity, target identity)."""

    def __init__(self, topology: Topology):
        self._topology = topology  # the operator's view: every bundle's certificate
        self._channels: dict[tuple[Identity, Identity], grpc.Channel] = {}

    def identities(self) -> list[Identity]:
        return [CLIENT, AGGREGATOR, CURATOR] + [entry.identity for entry in self._topology.parties]

    def stub(self, caller: Identity, target: Target):
        """A raw-bytes stub for `target` over `caller`'s channel (one channel per caller and receiver)."""
        key = (caller, target.identity)
        if key not in self._channels:
            tls = self._topology.tls_for(caller)
            assert tls is not None
            credentials = tls.channel_credentials()
            self._channels[key] = grpc.secure_channel(self._topology.entry(target.identity).address, credentials,
                                                      options=target_options(target.identity))
        return self._channels[key].unary_unary(target.path, request_serializer=lambda raw: raw,
                                               response_deserializer=lambda raw: raw)

    def call(self, caller: Identity, target: Target, data: bytes, timeout: float = HANG_S) -> str:
        stub = self.stub(caller, target)
        try:
            stub(data, timeout=timeout)
        except grpc.RpcError as error:
            return error.code().name
        return "OK"

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()


def fuzz(topology: Topology, run: processes.RunDirectory, context: FuzzContext, cases_per_rpc: int,
         rng: random.Random, on_progress=None) -> dict:
    """`cases_per_rpc` cases against every RPC of every role, each from a random identity's certificate."""
    caller = Caller(topology)
    results: dict[str, RpcFuzzStats] = {}
    kinds: Counter = Counter()
    try:
        all_targets = targets(topology)
        for index, target in enumerate(all_targets):
            stats = results.setdefault(f"{target.identity.role}.{target.method}", RpcFuzzStats())
            previous = None
            for _ in range(cases_per_rpc):
                if previous is not None and rng.random() < 0.1:
                    kind, data, identity = "replay", previous[0], previous[1]  # the same call again, same sender
                else:
                    kind, data = make_case(target, rng, context)
                    identity = rng.choice(caller.identities())
                previous = (data, identity)
                kinds[kind] += 1
                status = caller.call(identity, target, data)
                stats.sent += 1
                stats.statuses[status] += 1
                if status == "DEADLINE_EXCEEDED":
                    stats.hangs += 1
                elif status not in DEFINED_STATUSES:
                    stats.undefined += 1
            if on_progress:
                on_progress(f"fuzzed {index + 1}/{len(all_targets)} RPCs")
    finally:
        caller.close()
    crashed = [name for name, pid in _pids(run).items() if not processes._running(pid)]
    return {
        "cases": sum(s.sent for s in results.values()),
        "case_kinds": dict(kinds),
        "per_rpc": {name: stats.to_dict() for name, stats in sorted(results.items())},
        "hangs": sum(s.hangs for s in results.values()),
        "undefined_statuses": sum(s.undefined for s in results.values()),
        "crashes": len(crashed),
        "crashed_roles": crashed,
    }


def _pids(run: processes.RunDirectory) -> dict[str, int]:
    import json

    return json.loads(run.processes.read_text()) if run.processes.exists() else {}


def resources(run: processes.RunDirectory) -> dict[str, dict]:
    """RSS (MB), threads and open file descriptors of every role process, from /proc."""
    usage = {}
    for name, pid in _pids(run).items():
        status = Path(f"/proc/{pid}/status")
        if not status.exists():
            continue
        fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        usage[name] = {
            "rss_mb": int(fields["VmRSS"].split()[0]) / 1024,
            "threads": int(fields["Threads"]),
            "fds": len(list(Path(f"/proc/{pid}/fd").iterdir())),
        }
    return usage


def growth(before: dict[str, dict], after: dict[str, dict]) -> dict[str, dict]:
    return {name: {key: after[name][key] - before[name][key] for key in before[name]}
            for name in before if name in after}


def open_session_ids(topology: Topology, run: processes.RunDirectory, session_id: str, parameters) -> None:
    """Open (not start) one session of the target protocol (`target()`) with `parameters` everywhere it opens, so
    out-of-order steps have a session to hit."""
    fuzzed = target()
    caller = Caller(topology)
    try:
        for entry in topology.roles:
            if entry.identity.role in fuzzed.opened_at:
                message = to_role(session_id, entry.identity, **fuzzed.open(parameters))
                caller.call(CLIENT, Target(entry.identity, "Step", role_pb2.Envelope), message.SerializeToString(),
                            timeout=60)
    finally:
        caller.close()


def full_matrix(parties: int) -> list[tuple]:
    """Every role at every step it takes part in: SIGKILL and SIGSTOP on receiving each message, and each
    message it sends dropped or delayed (2 s)."""
    leader, last = Identity("party", 1), Identity("party", parties)
    roles = {"leader": leader, "party": last, "curator": CURATOR, "aggregator": AGGREGATOR}
    scenarios = []
    for name, faults in fault_entries().items():
        for kind, labels in faults.received.items():
            for label in labels:
                for fault in ("kill-on", "stop-on"):
                    scenarios.append((name, roles[kind], f"{fault}:{label}"))
    for name, faults in fault_entries().items():
        for kind, labels in faults.sent.items():
            for label in labels:
                scenarios += [(name, roles[kind], f"drop:{label}"), (name, roles[kind], f"delay:{label}:2")]
    return scenarios


def fault_entries() -> dict:
    """The registry's protocols in the fault matrix, in registry order."""
    from launcher.registry import PROTOCOLS

    return {name: protocol.faults for name, protocol in PROTOCOLS.items() if protocol.faults is not None}


def hardened() -> dict[str, Hardening]:
    """The registry's protocols in `bench hardening`'s concurrent and repeated sessions, in registry order."""
    from launcher.registry import PROTOCOLS

    return {name: protocol.hardening for name, protocol in PROTOCOLS.items() if protocol.hardening is not None}


def target_name() -> str:
    """The protocol the hardening target deployment fuzzes: the first in the registry that declares a target."""
    return next(name for name, entry in hardened().items() if entry.target is not None)


def target() -> HardeningTarget:
    fuzzed = hardened()[target_name()].target
    assert fuzzed is not None
    return fuzzed


NEXT_SESSION_DEADLINE_S = 120.0


def fault_matrix(run_dir: Path, topology: Topology, client_data: dict, parameters, scenarios, on_progress=None
                 ) -> list[dict]:
    """Each scenario is (protocol, role, fault):
    - "SIGKILL" / "SIGSTOP": the role gets that signal 0.3 s into a session (stopped until past the deadline);
    - "kill-on:LABEL" / "stop-on:LABEL": the role kills or stops itself on receiving that message;
    - "drop:LABEL" / "delay:LABEL:S": the role loses, or sends S seconds late, that outgoing message.
    Expected, as the spec says: the session completes, or fails for the client with nothing published by
    anyone and ended at every role that answers (none waits out its deadline); then, with the role back and
    without the fault, the next session succeeds. Each session is the protocol's `Faults.session`, the faulty one
    with the deadline of `parameters` (the target protocol's, from `start_target`), the next one with at least
    NEXT_SESSION_DEADLINE_S.
    Where the protocol's participants hand out shares (`HardeningTarget.publishes`), none may after a failure."""
    import asyncio
    import json
    import os
    import signal
    import threading

    run = processes.RunDirectory(run_dir)
    deadline = target().deadline(parameters)
    entries = fault_entries()
    publishing = {name: entry.target.publishes for name, entry in hardened().items() if entry.target is not None}
    results = []

    def session(protocol: str, session_id: str, deadline: float = deadline):
        return entries[protocol].session(topology, client_data, deadline, session_id)

    for protocol, identity, fault in scenarios:
        timed = fault in ("SIGKILL", "SIGSTOP")
        if not timed:
            processes.restart(run.path, identity, test_mode=True, fault=fault, budget=UNLIMITED)
        pid = json.loads(run.processes.read_text())[str(identity)]
        striker = None
        if timed:
            def strike(pid=pid, fault=fault):
                time.sleep(0.3)  # the session is under way
                os.kill(pid, signal.SIGKILL if fault == "SIGKILL" else signal.SIGSTOP)

            striker = threading.Thread(target=strike)
        session_id = f"fault-{protocol}-{identity.role}{identity.id}-{fault.replace('/', '.').replace(':', '-')}"
        started = time.perf_counter()
        if striker:
            striker.start()
        try:
            asyncio.run(session(protocol, session_id))
            observed = "completed"
        except Exception as error:  # any failure is an allowed outcome here
            observed = f"failed: {_describe(error)}"
        if striker:
            striker.join()
        seconds = time.perf_counter() - started
        # Looked at as the client's failure is reported: the session must have ended everywhere already.
        still_open = _still_open(topology, session_id) if observed != "completed" else []
        if fault == "SIGKILL":  # a session shorter than the strike: let the kill land before deciding to restart
            for _ in range(50):
                if not processes._running(pid):
                    break
                time.sleep(0.1)
        stopped = fault == "SIGSTOP" or fault.startswith("stop-on:")
        if stopped:
            time.sleep(max(0.0, deadline + 1 - seconds))  # stopped past the session's deadline
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        if not processes._running(pid) or not timed or stopped:
            processes.restart(run.path, identity, test_mode=True, budget=UNLIMITED)  # back, without the fault
        # After a failure nobody may hand out a share (a restarted role no longer knows the session at all).
        published = _published_anywhere(topology, run, session_id, publishing[protocol]) \
            if protocol in publishing and observed != "completed" else []
        next_error = None
        try:
            # An honest session: its deadline bounds a failure only. A restarted party's first session trains
            # its teacher first, which on a busy machine alone can take the faults' short deadline.
            asyncio.run(session(protocol, session_id + "-next", max(deadline, NEXT_SESSION_DEADLINE_S)))
        except Exception as error:
            next_error = _describe(error)
        next_ok = next_error is None
        must_complete = fault.startswith("delay:")
        row = {"protocol": protocol, "role": str(identity), "fault": fault,
               "expected": "completes" if must_complete else
               "completes, or fails with nothing published; the next session succeeds",
               "observed": observed, "published_by": published, "still_open_at": still_open,
               "next_session_succeeds": next_ok,
               **({"next_session_error": next_error} if next_error else {}),
               "seconds": round(seconds, 2)}
        completed = observed == "completed"
        row["as_expected"] = (completed or (not must_complete and not published and not still_open)) and next_ok
        results.append(row)
        if on_progress:
            on_progress(f"fault {protocol}/{identity}/{fault}: {observed}; next session "
                        f"{'succeeds' if next_ok else 'FAILS'}")
    return results


def start_target(run_dir: Path, parties: int, bits: int, seed: int, deadline: float):
    """A deployment to attack (test mode, logistic teachers on breast cancer) and the target protocol's session
    parameters for it (`target()`): (run directory, topology, client data, parameters)."""
    from launcher.common import client
    from mpdp.learning import datasets

    topology = processes.up(run_dir, parties, bits, datasets.load("breast-cancer"), seed=seed, model="logistic",
                            test_mode=True, aux_fraction=0.2,  # Charlie holds X_aux: Hamm runs too
                            budget=UNLIMITED)  # its sessions are attacks and probes, many of them
    run = processes.RunDirectory(run_dir)
    client_data = client.load_client_data(run.client_data)
    return run, topology, client_data, target().parameters(topology, client_data, deadline)


def _published_anywhere(topology: Topology, run: processes.RunDirectory, session_id: str,
                        kinds: tuple[str, ...]) -> list[str]:
    """Participants of the `kinds` that hand out a share of `session_id` (an aborted session must have none)."""
    caller = Caller(topology)
    published = []
    try:
        for entry in topology.roles:
            if entry.identity.role in kinds:
                request = to_role(session_id, entry.identity)
                status = caller.call(CLIENT, Target(entry.identity, "AwaitResult", role_pb2.Envelope),
                                     request.SerializeToString(), timeout=HANG_S)
                if status == "OK":
                    published.append(str(entry.identity))
    finally:
        caller.close()
    return published


def _still_open(topology: Topology, session_id: str) -> list[str]:
    """Role processes that still run `session_id` (GetStatus): after a failure every participant has stopped it
    at once, none waits out its deadline. A process that does not answer (killed, stopped) is not counted."""
    from mpdp.proto.v1 import common_pb2

    caller = Caller(topology)
    still = []
    try:
        for entry in topology.host_entries:
            stub = caller.stub(CLIENT, Target(entry.identity, "GetStatus", common_pb2.Empty))
            try:
                reply = common_pb2.StatusReply.FromString(stub(common_pb2.Empty().SerializeToString(), timeout=2))
            except grpc.RpcError:
                continue
            if session_id in reply.open_sessions:
                still.append(str(entry.identity))
    finally:
        caller.close()
    return still


def _describe(error: Exception) -> str:
    code = getattr(error, "code", None)
    return code().name if callable(code) else type(error).__name__


# ---------------------------------------------------------------------- transport limits
def idle_connections(address: str, count: int, source: str) -> list:
    """`count` TCP connections to `address` from the loopback address `source` that never start TLS; a
    connection the server refuses at once is kept too (closed, as `still_open` finds)."""
    import resource
    import socket

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < count + 256 <= hard:  # this process holds them all
        resource.setrlimit(resource.RLIMIT_NOFILE, (count + 256, hard))
    host, port = address.rsplit(":", 1)
    held = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((source, 0))
        sock.settimeout(10)
        try:
            sock.connect((host, int(port)))
        except OSError:
            sock.close()
            continue
        held.append(sock)
    return held


def still_open(sockets: list) -> int:
    """How many of `sockets` the server has not closed (nothing to read, no end of stream)."""
    open_ = 0
    for sock in sockets:
        sock.setblocking(False)  # a timeout would make recv wait, then fail as if the connection were gone
        try:
            if sock.recv(1) != b"":
                open_ += 1  # it sent something: open
        except BlockingIOError:
            open_ += 1
        except OSError:
            pass  # reset
    return open_


def close_all(sockets: list) -> None:
    for sock in sockets:
        sock.close()


def large_envelope(session_id: str, sender: Identity, receiver: Identity, size: int) -> bytes:
    """A serialized envelope padded with an unknown field to `size` bytes: costly to receive, refused by
    its content."""
    head = to_role(session_id, receiver, sender).SerializeToString()
    padding = size - len(head) - 16
    length, prefix = padding, bytearray()
    while True:
        byte, length = length & 0x7F, length >> 7
        prefix.append(byte | (0x80 if length else 0))
        if not length:
            break
    return head + bytes([(14 << 3) | 2]) + bytes(prefix) + b"\x01" * padding


def send_concurrently(topology: Topology, run: processes.RunDirectory, caller: Identity, target: Target,
                      requests: list[bytes], at_once: int, timeout: float = 300.0) -> Counter:
    """Every request from `caller`'s certificate, `at_once` in flight; the statuses they got."""
    from concurrent.futures import ThreadPoolExecutor

    callers = [Caller(topology) for _ in range(at_once)]  # one connection each
    try:
        with ThreadPoolExecutor(at_once) as pool:
            statuses = list(pool.map(lambda item: callers[item[0] % at_once].call(caller, target, item[1], timeout),
                                     enumerate(requests)))
    finally:
        for each in callers:
            each.close()
    return Counter(statuses)


def long_polls(topology: Topology, run: processes.RunDirectory, receiver: Identity, session_id: str, count: int,
               timeout: float) -> tuple[Caller, list]:
    """`count` AwaitResult calls from the client for `session_id` at `receiver`, left waiting: (caller, futures)."""
    caller = Caller(topology)
    stub = caller.stub(CLIENT, Target(receiver, "AwaitResult", role_pb2.Envelope))
    request = to_role(session_id, receiver).SerializeToString()
    return caller, [stub.future(request, timeout=timeout) for _ in range(count)]


def abort_sessions(topology: Topology, run: processes.RunDirectory, session_ids: list[str],
                   receivers: list[Identity]) -> None:
    """The client aborts each session at each receiver (a test's cleanup)."""
    from mpdp.proto.v1 import common_pb2

    caller = Caller(topology)
    try:
        for receiver in receivers:
            for session_id in session_ids:
                request = common_pb2.AbortRequest(session_id=session_id, reason="test cleanup", sender=str(CLIENT),
                                                  receiver=str(receiver))
                caller.call(CLIENT, Target(receiver, "AbortSession", common_pb2.AbortRequest),
                            request.SerializeToString())
    finally:
        caller.close()
