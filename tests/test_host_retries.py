"""A role host takes each message once: a retry under its call id is answered as the first attempt was, and two
opening messages that meet (the client's opening and a peer's first round, at once) open the session once — the
key ceremony's "already exists (replay)" under load, and its "a participant could not be reached" when the
refused one was a peer's round. In process: a host, a fake gRPC context, no server."""

from __future__ import annotations

import asyncio

import pytest

from mpdp.cryptocore.dkg.holder import Holder
from mpdp.proto.v1 import keygen_pb2
from mpdp.protocols.keygen import codec
from mpdp.protocols.keygen.protocol import NAME, holder_protocol
from mpdp.sessions.errors import ProtocolError
from mpdp.sessions.identity import party
from mpdp.wire.channels import PeerChannels
from mpdp.wire.host import RoleHost
from mpdp.wire.identity import SENDER_METADATA_KEY, Principal
from mpdp.wire.traffic import CALL_ID_METADATA_KEY, TrafficLog
from tests.test_keygen_protocol import BATCH, BITS, HOLDERS, THRESHOLD

SESSION = "keygen-retries"


class Context:
    """What the host reads of a gRPC call: the sender (plaintext metadata) and the call id."""

    def __init__(self, sender: str, call_id: str):
        self._metadata = ((SENDER_METADATA_KEY, sender), (CALL_ID_METADATA_KEY, call_id))

    def auth_context(self):
        return {}

    def invocation_metadata(self):
        return self._metadata


def _opening():
    from launcher.common.client import to_role

    return to_role(SESSION, party(1), keygen=keygen_pb2.KeygenMessage(open=keygen_pb2.KeygenOpen(
        bits=BITS, holders=HOLDERS, threshold=THRESHOLD, batch=BATCH)))


def _first_round_from_2():
    from mpdp.wire.envelope import wrap

    protocol = holder_protocol([1, 2, 3], lambda *_: None, lambda _: None)
    message = next(m for m in Holder(2, HOLDERS, THRESHOLD, BITS, BATCH).start() if m.recipient in (0, 1))
    return wrap(SESSION, party(2), party(1), protocol, "round", codec.round_to_proto(message))


async def _host():
    # Peers at a closed port: what holder 1 sends fails in the background; these tests look at what it takes.
    addresses = {party(j): "127.0.0.1:9" for j in (1, 2, 3)}
    peers = PeerChannels(party(1), addresses, TrafficLog(), None)
    return RoleHost(Principal.of(party(1)), peers,
                    {NAME: holder_protocol([1, 2, 3], lambda *_: None, lambda _: None)}), peers


def test_a_retried_opening_is_answered_as_the_first_and_a_new_call_is_refused():
    async def scenario():
        host, peers = await _host()
        try:
            first = await host.step(Context("client/0", "call-1"), _opening())
            again = await host.step(Context("client/0", "call-1"), _opening())
            assert again is first and first.side.state.name == "RUNNING"
            with pytest.raises(ProtocolError, match="open") as refused:  # under a new call id: a replay
                await host.step(Context("client/0", "call-2"), _opening())
            with pytest.raises(ProtocolError) as again:  # and its retry gets the same refusal
                await host.step(Context("client/0", "call-2"), _opening())
            assert (again.value.kind, str(again.value)) == (refused.value.kind, str(refused.value))
            changed = _opening()
            changed.keygen.open.batch = BATCH + 1
            with pytest.raises(ProtocolError, match="already used for another message"):
                await host.step(Context("client/0", "call-1"), changed)
            assert first.side.state.name == "RUNNING"
        finally:
            await host.close()
            await peers.close()

    asyncio.run(scenario())


def test_two_openings_at_once_open_one_session_and_both_are_taken():
    async def scenario():
        host, peers = await _host()
        try:
            opened, rounded = await asyncio.gather(host.step(Context("client/0", "a"), _opening()),
                                                   host.step(Context("party/2", "b"), _first_round_from_2()))
            assert opened is rounded and opened.side.state.name == "RUNNING"
            assert host.open_ids() == [SESSION]
        finally:
            await host.close()
            await peers.close()

    asyncio.run(scenario())


def _abort(sender: str = "client/0"):
    from mpdp.proto.v1 import common_pb2

    return common_pb2.AbortRequest(session_id=SESSION, reason="the client lost aggregator/0", sender=sender)


def test_the_clients_abort_that_overtakes_an_opening_refuses_the_late_opening():
    async def scenario():
        host, peers = await _host()
        try:
            with pytest.raises(ProtocolError, match="unknown session"):
                await host.abort_from_peer(Context("client/0", "x"), _abort())
            with pytest.raises(ProtocolError, match="aborted: the client lost aggregator/0") as refused:
                await host.step(Context("party/2", "b"), _first_round_from_2())
            assert refused.value.kind.name == "ABORTED" and host.open_ids() == []
        finally:
            await host.close()
            await peers.close()

    asyncio.run(scenario())


def test_a_peers_abort_of_an_unknown_session_leaves_its_opening_possible():
    async def scenario():
        host, peers = await _host()
        try:
            with pytest.raises(ProtocolError, match="unknown session"):
                await host.abort_from_peer(Context("party/2", "x"), _abort("party/2"))
            opened = await host.step(Context("client/0", "a"), _opening())
            assert opened.side.state.name == "RUNNING"
        finally:
            await host.close()
            await peers.close()

    asyncio.run(scenario())


def test_an_abort_that_meets_the_opening_waits_for_it_and_aborts_the_session():
    async def scenario():
        host, peers = await _host()
        try:
            opening = asyncio.ensure_future(host.step(Context("client/0", "a"), _opening()))
            while not host._opening:  # the side is being built in its thread
                await asyncio.sleep(0)
            await host.abort_from_peer(Context("client/0", "x"), _abort())
            await asyncio.gather(opening, return_exceptions=True)  # taken before the abort, or refused after it
            assert host.side(party(1), SESSION).state.name == "ABORTED" and host.open_ids() == []
        finally:
            await host.close()
            await peers.close()

    asyncio.run(scenario())


def test_a_message_whose_call_the_transport_cancelled_is_sent_again_under_its_call_id(monkeypatch):
    """A receiver's connection reset mid-call ends the call CANCELLED: the message is sent again, once it gets
    through no failure is reported, and every attempt carries the same call id (the receiver takes it once)."""
    import grpc

    from mpdp.sessions.outbound import Outbound
    from mpdp.wire import host as host_module

    monkeypatch.setattr(host_module, "RETRY_PAUSE_S", 0.0)
    attempts: list[str] = []

    class Stub:
        async def Step(self, envelope, metadata, timeout):  # noqa: N802 (gRPC's name)
            call_id = dict(metadata)[CALL_ID_METADATA_KEY]
            attempts.append(call_id)
            if attempts.count(call_id) < 3:  # each message's first two attempts are cancelled
                raise grpc.aio.AioRpcError(grpc.StatusCode.CANCELLED, grpc.aio.Metadata(), grpc.aio.Metadata(),
                                           "CANCELLED")

    async def scenario():
        host, peers = await _host()
        try:
            hosted = await host.step(Context("client/0", "call-1"), _opening())
            undeliverable: list[str] = []
            monkeypatch.setattr(hosted.side, "on_undeliverable", lambda to, kind, reason: undeliverable.append(reason) or [])
            monkeypatch.setattr(host, "_stub", lambda to: Stub())
            body = codec.round_to_proto(next(m for m in Holder(1, HOLDERS, THRESHOLD, BITS, BATCH).start()
                                             if m.recipient in (0, 2)))
            await host._send(hosted, Outbound(party(2), "round", body))
            assert attempts and all(attempts.count(call_id) == 3 for call_id in attempts) and undeliverable == []
        finally:
            await host.close()
            await peers.close()

    asyncio.run(scenario())


def test_retry_pauses_give_a_busy_receiver_a_minute_and_a_missing_peer_three_seconds():
    """The pauses a failed call waits before going again (mpdp.wire.host._retry_pause)."""
    import grpc

    from mpdp.wire.host import BUSY_RETRY_WINDOW_S, CALL_LIMIT_DETAILS, SEND_ATTEMPTS, _retry_pause

    def schedule(code, details, deadline_s=300.0):
        waited, pauses = 0.0, []
        while (pause := _retry_pause(code, details, len(pauses) + 1, waited, deadline_s)) is not None:
            pauses.append(pause)
            waited += pause
        return waited, pauses

    waited, pauses = schedule(grpc.StatusCode.UNAVAILABLE, "connection refused")
    assert len(pauses) == SEND_ATTEMPTS - 1 and waited == pytest.approx(3.0)  # a peer restarting, or given up
    for code, details in ((grpc.StatusCode.RESOURCE_EXHAUSTED, CALL_LIMIT_DETAILS), (grpc.StatusCode.CANCELLED, "")):
        waited, pauses = schedule(code, details)
        assert BUSY_RETRY_WINDOW_S <= waited < BUSY_RETRY_WINDOW_S + 4.0 and max(pauses) <= 4.0
        assert schedule(code, details, deadline_s=10.0)[0] < 14.0  # never much past the session's deadline
    # mpdp's own RESOURCE_EXHAUSTED refuses a message's size: going again would not change that
    assert len(schedule(grpc.StatusCode.RESOURCE_EXHAUSTED, "request of 70000 bytes is over the limit")[1]) \
        == SEND_ATTEMPTS - 1
    assert _retry_pause(grpc.StatusCode.PERMISSION_DENIED, "no", 1, 0.0, 300.0) is None
