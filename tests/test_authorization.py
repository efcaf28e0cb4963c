"""Who may call the diagnostic and control RPCs, tried with every role's certificate."""

import grpc
import pytest

from launcher.protocols.pathak.client import EVALUATOR_VIEW
from mpdp.proto.v1 import common_pb2, pathak_pb2
from mpdp.proto.v1.role_pb2_grpc import RoleStub
from mpdp.sessions.errors import MAX_REASON_LENGTH, clean_reason
from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, party
from tests.deployment import envelope


def _code(action) -> grpc.StatusCode:
    try:
        action()
    except grpc.RpcError as error:
        return error.code()
    return grpc.StatusCode.OK


@pytest.fixture(scope="module")
def finished_pathak(pool):
    d = pool.get(3)
    return d, d.run_pathak(noise_seed=3)


def test_traffic_logs_answer_only_the_client(finished_pathak):
    """The traffic log spells out π1 (who routed to whom): Charlie, the parties and the aggregator may not read it."""
    d, report = finished_pathak
    request = common_pb2.SessionRef(session=report["session_id"])
    roles = [AGGREGATOR, CURATOR, party(1), party(2), party(3)]
    for target in roles:
        for caller in roles:
            code = _code(lambda: d.call(target, RoleStub, "GetTraffic", request, caller))
            assert code == grpc.StatusCode.PERMISSION_DENIED, (target, caller, code)
        reply = d.call(target, RoleStub, "GetTraffic", request, CLIENT)
        assert reply.records or target == AGGREGATOR


def test_status_answers_only_the_client(finished_pathak):
    d, _ = finished_pathak
    for target in (AGGREGATOR, CURATOR, party(1)):
        for caller in (AGGREGATOR, CURATOR, party(2)):
            assert _code(lambda: d.call(target, RoleStub, "GetStatus", common_pb2.Empty(), caller)) \
                == grpc.StatusCode.PERMISSION_DENIED
        assert d.call(target, RoleStub, "GetStatus", common_pb2.Empty(), CLIENT).role == target.role


def test_test_records_answer_only_the_client(finished_pathak):
    d, report = finished_pathak
    for caller in (CURATOR, AGGREGATOR, party(2)):
        request = envelope(report["session_id"], party(1), caller)
        code = _code(lambda: d.call(party(1), RoleStub, "GetTestRecord", request, caller))
        assert code == grpc.StatusCode.PERMISSION_DENIED, caller
    reply = d.call(party(1), RoleStub, "GetTestRecord", envelope(report["session_id"], party(1)), CLIENT)
    assert reply.pathak.test_record.records > 0


def test_only_the_client_or_a_participant_may_abort_a_pathak_session(pool):
    d = pool.get(3)
    session_id = "abort-rights"
    opened = pathak_pb2.PathakMessage(open=d.pathak_parameters().to_proto())
    participants = [party(1), party(2), party(3), CURATOR]
    for target in participants:
        d.call(target, RoleStub, "Step", envelope(session_id, target, pathak=opened), CLIENT)
    # The aggregator takes no part in Pathak: it may abort nothing.
    for target in participants:
        request = common_pb2.AbortRequest(session_id=session_id, reason="the aggregator says so")
        assert _code(lambda: d.call(target, RoleStub, "AbortSession", request, AGGREGATOR)) \
            == grpc.StatusCode.PERMISSION_DENIED
    # A participant may; its reason arrives cleaned and bounded.
    hostile = "line one\nforged log line: session completed\x1b[2J" + "x" * 50_000  # under the 64 KiB cap on aborts
    d.call(party(2), RoleStub, "AbortSession",
           common_pb2.AbortRequest(session_id=session_id, reason=hostile), party(3))
    with pytest.raises(grpc.RpcError) as aborted:
        d.call(party(2), RoleStub, "AwaitResult", envelope(session_id, party(2)), CLIENT)
    assert aborted.value.code() == grpc.StatusCode.ABORTED
    details = aborted.value.details()
    assert "\n" not in details and "\x1b" not in details and len(details) < MAX_REASON_LENGTH + 100
    log_lines = d.run.log_file(party(2)).read_text().splitlines()
    assert any(f"session {session_id} aborted" in line for line in log_lines)
    assert not any(line.startswith("forged log line") for line in log_lines)  # the reason cannot forge a log line
    for target in (party(1), party(3), CURATOR):  # the client cleans up the rest
        d.call(target, RoleStub, "AbortSession", common_pb2.AbortRequest(session_id=session_id), CLIENT)


def test_clean_reason():
    assert clean_reason("a\nb\r\tc\x00d") == "a b c d"
    assert len(clean_reason("y" * 10_000)) == MAX_REASON_LENGTH


def test_the_report_keeps_what_names_pi1_in_the_evaluators_view(finished_pathak):
    """The report says Charlie and the parties do not learn π1 or the sizes; what would contradict that is
    the operator's only, and sits in one labelled section."""
    _, report = finished_pathak
    outside = {key: value for key, value in report.items() if key != EVALUATOR_VIEW}
    text = repr(outside)
    for secret in ("self_deliveries", "traffic_detail", "party_sizes", "routed_share", "stages_by_participant"):
        assert secret not in text, secret
    assert {"self_deliveries", "traffic", "traffic_detail"} <= set(report[EVALUATOR_VIEW])
    assert "operator" in report[EVALUATOR_VIEW]["note"]


def test_unparseable_messages_get_invalid_argument_and_the_role_keeps_serving(pool):
    """Random bytes where a message should be: INVALID_ARGUMENT (not UNKNOWN and a traceback), nothing recorded."""
    import random

    from mpdp.wire.tls import target_options

    d = pool.get(3)
    credentials = d.topology.tls_for(CLIENT).channel_credentials()
    rng = random.Random(9)
    garbage = [b"\xff" * 7, bytes([0x0a, 0x80]), bytes(rng.randrange(256) for _ in range(64)), b"\x0a\xff\xff\xff\xff\x0f"]
    for target, method in ((party(1), "/mpdp.v1.Role/Step"), (CURATOR, "/mpdp.v1.Role/Step"),
                           (AGGREGATOR, "/mpdp.v1.Role/AwaitResult"), (party(2), "/mpdp.v1.Role/AbortSession")):
        with grpc.secure_channel(d.topology.entry(target).address, credentials, options=target_options(target)) as channel:
            call = channel.unary_unary(method, request_serializer=lambda raw: raw,
                                       response_deserializer=lambda raw: raw)
            for data in garbage:
                with pytest.raises(grpc.RpcError) as refused:
                    call(data, timeout=10)
                assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (method, data, refused.value)
        assert "Traceback" not in d.run.log_file(target).read_text()
    assert d.run_pathak()["result"]["w"]


def test_servers_log_one_line_per_session_event(finished_pathak):
    d, report = finished_pathak
    session_id = report["session_id"]
    for identity in (CURATOR, party(1)):
        text = d.run.log_file(identity).read_text()
        assert f"session {session_id} opened at {identity}: pathak" in text
        assert f"session {session_id} completed at {identity}" in text
        assert f"session {session_id} step at {identity}: pathak/start from client/0" in text
