"""No peer can exhaust a role through its transport: connections per address, handshake time, large
refused requests, sessions and long polls per opener, log size; and an abort names no message kind or
receiver. Real processes on loopback; the roles start under a 1 024-descriptor limit (a usual default)."""

import asyncio
import os
import re
import resource
import signal
import time

import pytest

from launcher.bench import attacks as hardening
from launcher.common.client import to_role
from launcher.deployment import processes
from launcher.protocols.dppp import client as dppp_client
from launcher.protocols.hamm.client import run_hamm_session, session_parameters
from mpdp.proto.v1 import pathak_pb2, role_pb2
from mpdp.sessions import registry
from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, party
from mpdp.wire import gate, host
from tests.waiting import eventually

pytestmark = pytest.mark.hardening
BITS, PARTIES, DEADLINE = 1024, 3, 60.0
ROLE_DESCRIPTORS = 1024
FLOOD = 1100
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("transport") / "run"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(ROLE_DESCRIPTORS, hard), hard))  # inherited by the roles
    try:
        run, topology, client_data, parameters = hardening.start_target(run_dir, PARTIES, BITS, 5, DEADLINE)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    try:
        _dppp(topology, client_data, "warm-up")  # the first round loads what later ones reuse
        yield run, topology, client_data, parameters
    finally:
        processes.down(run_dir)


def _dppp(topology, client_data, session_id):
    return asyncio.run(dppp_client.run_dppp_session(topology, client_data, 5.0, 1e-5, 6, deadline_s=DEADLINE,
                                                    session_id=session_id))


def test_idle_connections_from_one_address_are_capped_and_an_honest_round_runs(target):
    run, topology, client_data, _ = target
    flood = hardening.idle_connections(topology.entry(AGGREGATOR).address, FLOOD, "127.0.0.2")
    try:
        # the role closes the connections past the cap as it accepts them: on a busy machine that takes a while
        assert eventually(lambda: hardening.still_open(flood) <= gate.MAX_CONNECTIONS_PER_PEER), \
            hardening.still_open(flood)
        assert _dppp(topology, client_data, "under-flood")["result"]["labels"]
    finally:
        hardening.close_all(flood)


def test_a_connection_that_never_starts_tls_is_closed_by_the_role(target):
    _, topology, _, _ = target
    [idle] = hardening.idle_connections(topology.entry(CURATOR).address, 1, "127.0.0.3")
    try:
        idle.settimeout(60)  # gRPC's own default would hold it 120 s
        assert idle.recv(1) == b""
    finally:
        idle.close()


def test_large_refused_requests_leave_no_memory_behind(target):
    run, topology, _, _ = target
    step = hardening.Target(AGGREGATOR, "Step", role_pb2.Envelope)
    before = hardening.resources(run)["aggregator/0"]["rss_mb"]
    forged = hardening.large_envelope("large", CLIENT, AGGREGATOR, 63 * MIB)  # party/1 may not speak for the client
    statuses = hardening.send_concurrently(topology, run, party(1), step, [forged] * 16, at_once=8)
    del forged
    own = hardening.large_envelope("large", party(1), AGGREGATOR, 63 * MIB)  # its own: parsed, carries no message
    statuses += hardening.send_concurrently(topology, run, party(1), step, [own] * 16, at_once=8)
    del own
    assert statuses == {"PERMISSION_DENIED": 16, "INVALID_ARGUMENT": 16}, statuses
    deadline = time.monotonic() + 15  # memory is given back within 15 s idle; stop looking once it is
    while (after := hardening.resources(run)["aggregator/0"]["rss_mb"]) - before >= 256 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert after - before < 256, (before, after)  # 32 × 63 MiB went through it


def _pathak_open(parameters):
    return pathak_pb2.PathakMessage(open=parameters.to_proto())


def test_one_opener_cannot_block_the_sessions_of_another(target):
    """The client opens sessions it never starts at every party; the aggregator's DPPP round still runs."""
    run, topology, client_data, parameters = target
    opened = [f"unstarted-{index}" for index in range(256)]
    caller = hardening.Caller(topology)
    statuses: dict = {}
    try:
        for receiver in (party(number) for number in range(1, PARTIES + 1)):
            step = hardening.Target(receiver, "Step", role_pb2.Envelope)
            for session_id in opened:
                request = to_role(session_id, receiver, pathak=_pathak_open(parameters)).SerializeToString()
                status = caller.call(CLIENT, step, request, timeout=60)
                statuses[status] = statuses.get(status, 0) + 1
        assert statuses.get("OK", 0) <= PARTIES * registry.PER_OPENER, statuses
        assert statuses.get("RESOURCE_EXHAUSTED", 0) > 0, statuses
        assert _dppp(topology, client_data, "beside-unstarted")["result"]["labels"]
    finally:
        caller.close()
        hardening.abort_sessions(topology, run, opened, [party(n) for n in range(1, PARTIES + 1)])


def test_long_polls_are_capped_per_caller(target):
    """128 waiting AwaitResult calls from the client at every party leave room for the aggregator's messages."""
    run, topology, client_data, parameters = target
    parties = [party(number) for number in range(1, PARTIES + 1)]
    caller = hardening.Caller(topology)
    polls = []
    try:
        for receiver in parties:
            request = to_role("polled", receiver, pathak=_pathak_open(parameters)).SerializeToString()
            assert caller.call(CLIENT, hardening.Target(receiver, "Step", role_pb2.Envelope), request, 60) == "OK"
        for receiver in parties:
            polls.append(hardening.long_polls(topology, run, receiver, "polled", 128, timeout=300))
        time.sleep(2)
        refused = sum(1 for _, futures in polls for future in futures
                      if future.done() and future.exception() is not None
                      and future.exception().code().name == "RESOURCE_EXHAUSTED")
        assert refused == PARTIES * (128 - host.MAX_LONG_POLLS_PER_CALLER), refused
        assert _dppp(topology, client_data, "beside-polls")["result"]["labels"]
    finally:
        hardening.abort_sessions(topology, run, ["polled"], parties)
        for poll_caller, futures in polls:
            for future in futures:
                future.cancel()
            poll_caller.close()
        caller.close()


def test_role_logs_are_rotated_at_their_size_cap(target):
    run, topology, _, _ = target
    cap = 64 * 1024
    os.environ["MPDP_LOG_MAX_BYTES"] = str(cap)
    try:
        processes.restart(run.path, party(3), test_mode=True)
    finally:
        del os.environ["MPDP_LOG_MAX_BYTES"]
    try:
        refused = role_pb2.Envelope(session_id="noise", sender="party/3", receiver="party/3").SerializeToString()
        statuses = hardening.send_concurrently(topology, run, CLIENT, hardening.Target(party(3), "Step",
                                                                                      role_pb2.Envelope),
                                               [refused] * 2000, at_once=4)  # each refusal is one log line
        assert set(statuses) == {"PERMISSION_DENIED"}, statuses
        log = run.log_file(party(3))
        files = sorted(log.parent.glob(log.name + "*"))
        assert log.with_name(log.name + ".1") in files, files
        assert len(files) <= 4 and all(path.stat().st_size <= cap + 4096 for path in files), \
            {str(path): path.stat().st_size for path in files}
    finally:
        processes.restart(run.path, party(3), test_mode=True)


def test_an_undeliverable_message_aborts_naming_the_session_and_the_host_not_the_message(target):
    """Charlie's Hamm queries cannot reach the aggregator: the reason names the session and the unreachable
    host, not the message (Pathak's sides name no receiver either: a routed share's would be a π1 edge)."""
    run, topology, client_data, _ = target
    os.kill(hardening._pids(run)["aggregator/0"], signal.SIGKILL)
    try:
        parameters = session_parameters(topology, client_data, "soft", 1.0, 1e-5, 0.01)
        with pytest.raises(Exception) as failure:
            asyncio.run(run_hamm_session(topology, client_data, parameters, deadline_s=DEADLINE,
                                         session_id="unreachable"))
        details = failure.value.details()  # type: ignore[attr-defined]
        assert re.fullmatch(r"session unreachable aborted: session unreachable: aggregator/0 could not be reached",
                            details), details
    finally:
        processes.restart(run.path, AGGREGATOR, test_mode=True)
