"""The transport's limits without processes: admission of raw requests, sessions per opener and idle
expiry, the unreachable-participant abort reason, rotated role logs."""

import subprocess
import sys

import grpc
import pytest

from mpdp.proto.v1 import role_pb2
from mpdp.sessions.errors import Kind, ProtocolError
from mpdp.sessions.registry import SessionRegistry
from mpdp.sessions.side import RoleSide
from mpdp.wire.admission import LARGE_REQUEST_BYTES, LEADING_FIELDS, SMALL_REQUEST_BYTES, Refused, admit, leading_string
from mpdp.wire.identity import Principal


def _envelope(sender: str, padding: int = 0) -> bytes:
    head = role_pb2.Envelope(session_id="s", sender=sender, receiver="aggregator/0").SerializeToString()
    return head + bytes([(14 << 3) | 2]) + _varint(padding) + b"\x00" * padding


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _refusal(method, principal, raw) -> grpc.StatusCode | None:
    try:
        admit(method, Principal.parse(principal) if principal else None, raw)
    except Refused as refused:
        return refused.code
    return None


def test_a_large_envelope_is_refused_unparsed_when_its_sender_is_not_the_caller():
    large = LARGE_REQUEST_BYTES + 1
    assert _refusal("Step", "party/1", _envelope("client/0", large)) == grpc.StatusCode.PERMISSION_DENIED
    assert _refusal("Step", "party/1-3", _envelope("party/2", large)) is None
    assert _refusal("Step", "party/1", _envelope("party/1", large)) is None
    assert _refusal("Step", "party/1", _envelope("client/0")) is None  # small: the handler refuses it, parsed
    assert _refusal("Step", None, _envelope("party/1")) == grpc.StatusCode.PERMISSION_DENIED


def test_a_large_envelope_must_name_its_sender_in_its_first_fields():
    body = bytes([(14 << 3) | 2]) + _varint(LARGE_REQUEST_BYTES) + b"\x00" * LARGE_REQUEST_BYTES
    sender = role_pb2.Envelope(sender="party/1").SerializeToString()
    assert _refusal("Step", "party/1", body + sender) is None  # a body is skipped, not read
    filler = bytes([(1 << 3) | 2, 1, 0x41]) * LEADING_FIELDS
    assert _refusal("Step", "party/1", filler + body + sender) == grpc.StatusCode.INVALID_ARGUMENT
    assert _refusal("Step", "party/1", body) == grpc.StatusCode.INVALID_ARGUMENT
    assert leading_string(b"\x12\xff\xff\xff\xff\x0f", 2) is None  # a length past the end
    assert leading_string(b"\x12\x02\xff\xfe", 2) is None  # not UTF-8
    assert leading_string(b"\x0f", 2) is None  # a wire type that does not exist
    assert leading_string(_envelope("party/7"), 2) == "party/7"


def test_operator_rpcs_are_the_clients_and_small():
    assert _refusal("GetTraffic", "party/1", b"") == grpc.StatusCode.PERMISSION_DENIED
    assert _refusal("AwaitResult", "aggregator/0", b"") == grpc.StatusCode.PERMISSION_DENIED
    assert _refusal("GetTraffic", "client/0", b"\x00" * (SMALL_REQUEST_BYTES + 1)) == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert _refusal("AbortSession", "party/1", b"\x00" * (SMALL_REQUEST_BYTES + 1)) == \
        grpc.StatusCode.RESOURCE_EXHAUSTED
    assert _refusal("AbortSession", "party/1", b"") is None
    assert _refusal("AwaitResult", "client/0", b"\x00" * 10 * SMALL_REQUEST_BYTES) is None


class _Side:
    def __init__(self):
        self.finished = False
        self.reason = ""

    def abort(self, reason):
        self.finished = True
        self.reason = reason


def test_each_opener_holds_only_its_share_of_running_sessions():
    registry: SessionRegistry = SessionRegistry(keep=8, per_opener=3)
    mine = [registry.create(f"c{index}", _Side(), "client/0") for index in range(3)]
    with pytest.raises(ProtocolError) as refused:
        registry.check_new("c3", "client/0")
    assert refused.value.kind is Kind.RESOURCE_EXHAUSTED
    for index in range(3):  # another opener is not blocked
        registry.create(f"a{index}", _Side(), "aggregator/0")
    mine[0].finished = True  # a finished session frees its opener's share
    registry.create("c3", _Side(), "client/0")


def test_an_idle_session_expires_and_a_message_keeps_it(monkeypatch):
    import mpdp.sessions.registry as module

    now = [1000.0]
    monkeypatch.setattr(module.time, "monotonic", lambda: now[0])
    registry: SessionRegistry = SessionRegistry(idle_timeout_s=100)
    idle, busy = registry.create("idle", _Side(), "client/0"), registry.create("busy", _Side(), "client/0")
    now[0] += 60
    registry.touch("busy")
    now[0] += 60
    registry.check_new("other", "client/0")
    assert idle.finished and idle.reason == "session timed out"
    assert not busy.finished


def test_an_undeliverable_message_aborts_with_a_reason_that_names_no_message_and_a_receiver_only_if_public():
    from mpdp.protocols.pathak.participant import PathakSide
    from mpdp.sessions.identity import party

    class Side(RoleSide):
        def __init__(self):
            import enum

            super().__init__("s-1", enum.Enum("State", "OPEN DONE ABORTED").OPEN)

        @property
        def participants(self):
            return [party(1), party(2)]

    with pytest.raises(ProtocolError) as failure:
        Side().on_undeliverable(party(2), "votes", "UNAVAILABLE: connection refused")
    assert str(failure.value) == "session s-1: party/2 could not be reached"
    Side.names_receivers = PathakSide.names_receivers  # Pathak's routing is secret: its receivers are not named
    with pytest.raises(ProtocolError) as failure:
        Side().on_undeliverable(party(2), "routed_share", "UNAVAILABLE: connection refused")
    assert str(failure.value) == "session s-1: a participant could not be reached"


def test_a_role_log_written_to_a_file_rotates_at_its_cap(tmp_path):
    log = tmp_path / "party_1.log"
    script = ("import logging, sys\n"
              "from launcher.deployment import role_logs\n"
              "assert role_logs.rotate('INFO') is not None\n"
              "for index in range(3000):\n"
              "    logging.getLogger('x').info('line %05d %s', index, 'y' * 60)\n"
              "print('to stdout after the rotations', flush=True)\n")
    with log.open("a") as output:
        subprocess.run([sys.executable, "-c", script], stdout=output, stderr=subprocess.STDOUT, check=True,
                       env={"MPDP_LOG_MAX_BYTES": "16384", "PATH": "/usr/bin:/bin", "PYTHONPATH": "."})
    files = sorted(tmp_path.iterdir())
    assert [path.name for path in files] == ["party_1.log", "party_1.log.1", "party_1.log.2", "party_1.log.3"]
    assert all(path.stat().st_size <= 16384 for path in files)
    text = log.read_text()
    assert "line 02999" in text and "to stdout after the rotations" in text
