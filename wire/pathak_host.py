"""Hosts Pathak sessions inside a party's or Charlie's servicer.

Creates a session on the client's `open`, feeds every later message to the
session's state machine (one at a time, off the event loop), sends what it
emits — in order per receiver, each its own RPC — and aborts the session
everywhere when a send fails, a peer aborts, or the deadline passes.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Callable

import grpc

from mpdp_proto.v1 import common_pb2, curator_pb2_grpc, party_pb2_grpc, pathak_pb2
from pathak import ring
from pathak.parameters import PathakParameters
from pathak.participant import PathakParticipant
from sessions.errors import ProtocolError, aborted, clean_reason, denied, invalid, precondition
from sessions.registry import SessionRegistry
from wire.channels import PeerChannels
from wire.identity import CLIENT, Identity, require_sender, sender_of
from wire.status import translate_errors
from wire.traffic import CALL_ID_METADATA_KEY, new_call_id

log = logging.getLogger(__name__)
# Retries span 3 s, longer than the channels' 2 s maximum reconnect backoff, so a restarted peer
# is reached; a peer that stays down aborts the session after that.
SEND_ATTEMPTS = 7
RETRY_PAUSE_S = 0.5


@dataclass
class HostedSession:
    session: PathakParticipant
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    send_locks: dict[Identity, asyncio.Lock] = field(default_factory=dict)
    tasks: set[asyncio.Task] = field(default_factory=set)

    @property
    def finished(self) -> bool:
        return self.session.finished

    def abort(self, reason: str, withdraw_result: bool = False) -> None:
        self.session.abort(reason, withdraw_result)
        self.settled.set()


def _stub(peers: PeerChannels, identity: Identity):
    stub_class = party_pb2_grpc.PartyStub if identity.role == "party" else curator_pb2_grpc.CuratorStub
    return stub_class(peers.channel(identity))


class PathakHost:
    def __init__(self, me: Identity, peers: PeerChannels,
                 make_session: Callable[[str, PathakParameters], PathakParticipant]):
        self.me = me
        self._peers = peers
        self._make_session = make_session
        self._sessions: SessionRegistry[HostedSession] = SessionRegistry()

    def open_ids(self) -> list[str]:
        return self._sessions.open_ids()

    def knows(self, session_id: str) -> bool:
        try:
            self._sessions.get(session_id)
        except ProtocolError:
            return False
        return True

    def session(self, session_id: str) -> PathakParticipant:
        return self._sessions.get(session_id).session

    async def step(self, context, request: pathak_pb2.PathakMessage) -> None:
        kind = request.WhichOneof("body")
        if kind is None:
            raise invalid("a Pathak message needs a body")
        if kind == "open":
            require_sender(context, CLIENT)
            parameters = PathakParameters.from_proto(request.open)
            self._sessions.check_new(request.session_id)  # before the party trains its model
            session = await asyncio.to_thread(self._make_session, request.session_id, parameters)
            hosted = self._sessions.create(request.session_id, HostedSession(session))
            self._spawn(hosted, self._watchdog(hosted, request.session_id, parameters.deadline_seconds))
            log.info("session %s opened: pathak, K = %d", request.session_id, parameters.parties)
            return
        hosted = self._sessions.get(request.session_id)
        if hosted.finished:
            raise precondition(f"session {request.session_id} is {hosted.session.state.value}")
        sender = sender_of(context)
        async with hosted.lock:
            outbound = await asyncio.to_thread(hosted.session.receive, sender, kind, getattr(request, kind))
        log.info("session %s step: %s from %s", request.session_id, kind, sender)
        if hosted.finished:
            hosted.settled.set()
            self._log_end(request.session_id, hosted)
        for message in outbound:
            wire = pathak_pb2.PathakMessage(session_id=request.session_id, **{message.kind: message.body})
            self._spawn(hosted, self._send(hosted, request.session_id, message.to, wire))

    def _spawn(self, hosted: HostedSession, coroutine) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        hosted.tasks.add(task)
        task.add_done_callback(hosted.tasks.discard)

    async def _send(self, hosted: HostedSession, session_id: str, to: Identity, message) -> None:
        lock = hosted.send_locks.setdefault(to, asyncio.Lock())
        async with lock:  # FIFO: messages to one receiver leave in the order they were made
            if hosted.session.state.name == "ABORTED":
                return
            metadata = ((CALL_ID_METADATA_KEY, new_call_id()),)  # one message, one call id, however many attempts
            for attempt in range(1, SEND_ATTEMPTS + 1):
                try:
                    await _stub(self._peers, to).PathakStep(message, metadata=metadata,
                                                            timeout=hosted.session.parameters.deadline_seconds)
                    return
                except grpc.aio.AioRpcError as error:
                    retryable = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED)
                    if error.code() in retryable and attempt < SEND_ATTEMPTS:
                        # Not connected (yet), or the peer is at its limit of calls in flight: try again shortly;
                        # a peer that stays down or full aborts the session.
                        await asyncio.sleep(RETRY_PAUSE_S)
                        continue
                    reason = f"{message.WhichOneof('body')} to {to} failed: {error.code().name}: {error.details()}"
                    log.warning("session %s: %s", session_id, reason)
                    await self.abort_everywhere(hosted, session_id, reason)
                    return

    async def _watchdog(self, hosted: HostedSession, session_id: str, deadline: float) -> None:
        try:
            await asyncio.wait_for(hosted.settled.wait(), deadline)
        except TimeoutError:
            await self.abort_everywhere(hosted, session_id, f"session timed out after {deadline:.0f} s")

    async def abort_everywhere(self, hosted: HostedSession, session_id: str, reason: str) -> None:
        if hosted.finished:
            return
        hosted.abort(reason)
        self._log_end(session_id, hosted)
        request = common_pb2.AbortRequest(session_id=session_id, reason=f"{self.me}: {reason}")
        others = [p for p in hosted.session.participants if p != self.me]
        await asyncio.gather(*(_stub(self._peers, p).AbortSession(request, timeout=5.0) for p in others),
                             return_exceptions=True)

    @staticmethod
    def _log_end(session_id: str, hosted: HostedSession) -> None:
        session = hosted.session
        if session.state.name == "ABORTED":
            log.info("session %s aborted: %s", session_id, session.abort_reason)
        else:
            log.info("session %s completed", session_id)

    def abort_from_peer(self, session_id: str, sender: Identity | None, reason: str) -> None:
        """An abort from the client or from another participant of this session; anyone else is refused."""
        hosted = self._sessions.get(session_id)
        if sender is None or sender == self.me or (sender != CLIENT and sender not in hosted.session.participants):
            raise denied(f"{sender or 'an unidentified caller'} takes no part in session {session_id}")
        if hosted.session.state.name != "ABORTED":
            # Also after this participant finished: its share is one of K + 1, and the release failed elsewhere.
            hosted.abort(clean_reason(reason or f"aborted by {sender}"), withdraw_result=True)
            self._log_end(session_id, hosted)

    async def await_share(self, session_id: str) -> pathak_pb2.PathakPublishedShare:
        hosted = self._sessions.get(session_id)
        await hosted.settled.wait()
        session = hosted.session
        if session.published is None:
            raise aborted(f"session {session_id} aborted: {session.abort_reason}")
        return pathak_pb2.PathakPublishedShare(
            session_id=session_id,
            share=pathak_pb2.AdditiveShare(values=ring.to_bytes(session.published)),
            fractional_bits=session.parameters.fractional_bits,
            parties=session.parameters.parties,
            timing=[common_pb2.StageTiming(stage=s, seconds=t) for s, t in session.timing.items()],
            self_deliveries=[pathak_pb2.KindCount(kind=k, count=c) for k, c in sorted(session.self_deliveries.items())],
        )


class PathakRpcs:
    """The Pathak RPCs of every participant's servicer (party and curator); uses `self.pathak`."""

    pathak: PathakHost

    @translate_errors
    async def PathakStep(self, request, context):
        await self.pathak.step(context, request)
        return common_pb2.Empty()

    @translate_errors
    async def AwaitPathakShare(self, request, context):
        require_sender(context, CLIENT)
        return await self.pathak.await_share(request.session_id)
