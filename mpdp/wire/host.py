"""Hosts any protocol's per-role sides: one host per role process, for every logical identity it serves.

A session opens at a receiver when a protocol's opening message arrives; every later message
goes to that side (one at a time, off the event loop). What a side returns is sent in order per
receiver, each message its own Step RPC, retried under one call id while the receiver is
unreachable. The deadline and undeliverable messages are events the side answers; a side that
raises on one is aborted everywhere (every participant is told). Knows no protocol: it is given
a registry of them.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Callable

import grpc

from mpdp.cryptocore.errors import CryptoError
from mpdp.proto.v1 import common_pb2, role_pb2, role_pb2_grpc
from mpdp.sessions.errors import ProtocolError, aborted, clean_reason, denied, exhausted, invalid, precondition
from mpdp.sessions.identity import CLIENT, Identity
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.registry import SessionRegistry, check_session_id
from mpdp.sessions.side import RoleSide
from mpdp.wire import retries
from mpdp.wire.channels import PeerChannels
from mpdp.wire.envelope import identities, unwrap, wrap
from mpdp.wire.identity import Principal, principal_of, require_sender, require_speaks_for
from mpdp.wire.traffic import CALL_ID_METADATA_KEY, call_id_of, new_call_id

log = logging.getLogger(__name__)
# Retries span 3 s, longer than the channels' 2 s maximum reconnect backoff, so a restarted peer
# is reached; a peer that stays down is undeliverable after that.
SEND_ATTEMPTS = 7
RETRY_PAUSE_S = 0.5
RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED)
RETRYABLE_REFUSALS = frozenset(code.name for code in RETRYABLE)
# A receiver that is up but busy (RESOURCE_EXHAUSTED: its concurrent-call limit, when 20 party hosts send their
# votes at once) and a call the transport cancelled under load (a connection reset mid-call) are sent again with
# a growing pause for up to BUSY_RETRY_WINDOW_S, within the session's deadline: at M = 20 000 on two cores, 3 s
# lost 24 votes to the first and 562 to the second, and the session then waited for its whole deadline. The
# receiver takes each call id once and runs a step to its end whoever waits for it, so a retry is answered as
# the first attempt was.
CALL_LIMIT_DETAILS = "Concurrent RPC limit exceeded!"  # grpc's server; mpdp's own RESOURCE_EXHAUSTED refuses a size
BUSY_RETRY_WINDOW_S = 60.0
BUSY_PAUSE_MAX_S = 4.0
ABORT_TIMEOUT_S = 5.0
SETTLE_WAIT_S = 5.0
STEP_CHECK_S = 1.0
TAKEN = "taken"  # a retried call's first attempt was taken (its answer: the session it went to)  # how long a finished side's result waits for its last messages to leave


def _retry_pause(code: grpc.StatusCode, details: str | None, attempt: int, waited_s: float, deadline_s: float
                 ) -> float | None:
    """How long to wait before sending a failed call again, or None to give up: a peer that is not connected
    gets SEND_ATTEMPTS tries RETRY_PAUSE_S apart (3 s: a restarting peer is reached, a dead one soon given up);
    a busy one a pause that doubles up to BUSY_PAUSE_MAX_S, with jitter so that the senders it refused do not
    all come back at once, for BUSY_RETRY_WINDOW_S at most and never past the session's deadline."""
    busy = code == grpc.StatusCode.CANCELLED or (code == grpc.StatusCode.RESOURCE_EXHAUSTED
                                                 and details == CALL_LIMIT_DETAILS)
    if not busy and code in RETRYABLE:
        return RETRY_PAUSE_S if attempt < SEND_ATTEMPTS else None
    if busy and waited_s < min(BUSY_RETRY_WINDOW_S, deadline_s):
        return min(RETRY_PAUSE_S * 2 ** (attempt - 1), BUSY_PAUSE_MAX_S) * random.uniform(0.5, 1.0)
    return None


@dataclass
class HostedSession:
    session_id: str
    protocol: RoleProtocol
    side: RoleSide
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    send_locks: dict[Identity, asyncio.Lock] = field(default_factory=dict)
    tasks: set[asyncio.Task] = field(default_factory=set)
    sends: set[asyncio.Task] = field(default_factory=set)  # messages on their way out
    settling: bool = False  # finished: the result is handed out once its last messages left
    announced: bool = False  # its abort was told to (or came from) the other participants
    progressed: float = field(default_factory=time.monotonic)  # when the side last took a message

    @property
    def finished(self) -> bool:
        return self.side.finished

    def abort(self, reason: str, withdraw_result: bool = False) -> None:
        self.side.abort(reason, withdraw_result)
        self.settled.set()


MAX_IN_FLIGHT_PER_HOST = 16
EARLY_ABORTS_KEPT = 1024  # the client's aborts of sessions not (yet) open here, remembered newest first
# Long polls (AwaitResult) one caller may hold at once: the server runs MAX_CONCURRENT_RPCS calls in all, and
# waiting callers must leave room for the messages that let sessions finish.
MAX_LONG_POLLS_PER_CALLER = 32


class RoleHost:
    def __init__(self, principal: Principal, peers: PeerChannels, protocols: dict[str, RoleProtocol],
                 test_mode: bool = False):
        self.principal = principal
        self.protocols = protocols
        self.test_mode = test_mode
        self._peers = peers
        self._sessions: dict[Identity, SessionRegistry[HostedSession]] = {}
        self._in_flight: dict[Principal, asyncio.Semaphore] = {}
        self._long_polls: Counter[Principal] = Counter()
        # A call's answer: its step while being taken, then TAKEN or the refusal (retries.AnsweredCalls).
        self._answered: retries.AnsweredCalls[asyncio.Task | str | BaseException] = retries.AnsweredCalls()
        self._opening: dict[tuple[Identity, str], asyncio.Future[None]] = {}
        # Sessions the client aborted before they opened here (its abort overtook a peer's opening message that
        # was already on its way): the late opening is refused instead of waiting out its deadline.
        self._aborted_early: OrderedDict[str, str] = OrderedDict()

    # ------------------------------------------------------------------ lookup
    def _registry(self, me: Identity) -> SessionRegistry[HostedSession]:
        if not self.principal.covers(me):
            raise invalid(f"{me} is not hosted here ({self.principal})")
        return self._sessions.setdefault(me, SessionRegistry())

    def _hosted(self, me: Identity, session_id: str) -> HostedSession:
        return self._registry(me).get(session_id)

    def open_ids(self) -> list[str]:
        return sorted({sid for registry in self._sessions.values() for sid in registry.open_ids()})

    def side(self, me: Identity, session_id: str) -> RoleSide:
        return self._hosted(me, session_id).side

    # ------------------------------------------------------------------ RPCs
    async def step(self, context, envelope: role_pb2.Envelope) -> HostedSession:
        """One message to a side. A retry (the same sender and call id: its first answer was lost) is answered as
        the first attempt was, and the side sees the message once (mpdp.wire.retries)."""
        sender, me = identities(envelope)
        require_speaks_for(context, sender)
        caller, call_id = principal_of(context), call_id_of(context)
        principal = str(caller)
        fingerprint = retries.digest(envelope.SerializeToString(deterministic=True)) if call_id else b""
        key = (str(me), envelope.session_id)
        first = self._answered.previous(principal, "\0".join(key), call_id, fingerprint)
        if first is not None:
            log.info("session %s at %s: call %s from %s retried; answered as before", envelope.session_id, me,
                     call_id, sender)
            if isinstance(first, asyncio.Task):  # the first attempt is still being taken
                return await asyncio.shield(first)
            if isinstance(first, str):  # TAKEN
                return self._hosted(me, envelope.session_id)
            raise _again(first)
        # Taken in a task of its own: a caller that gives up (its deadline passed) does not cut the step off
        # halfway, and its retry waits for this same step's answer.
        answer = asyncio.get_running_loop().create_task(self._step(caller, envelope, sender, me))
        self._answered.record(principal, "\0".join(key), call_id, fingerprint, answer)

        def settled(task: asyncio.Task) -> None:
            error = None if task.cancelled() else task.exception()  # retrieved: a retry may never come
            if task.cancelled() or not isinstance(error, (ProtocolError, CryptoError, type(None))) or (
                    isinstance(error, ProtocolError) and error.kind.name in RETRYABLE_REFUSALS):
                self._answered.forget(principal, "\0".join(key), call_id)  # changed nothing: a retry is taken anew
            else:  # what a retry is answered, without the session itself (the registry bounds those)
                self._answered.record(principal, "\0".join(key), call_id, fingerprint, error or TAKEN)

        answer.add_done_callback(settled)
        return await asyncio.shield(answer)

    async def _step(self, caller: Principal | None, envelope: role_pb2.Envelope, sender: Identity,
                    me: Identity) -> HostedSession:
        protocol, kind, body = unwrap(envelope, self.protocols)
        registry = self._registry(me)
        session_id = envelope.session_id
        # Messages that meet a session being opened wait for it: two opening messages at once (the client's and a
        # peer's first round) open it once, and the second finds it open instead of refusing itself as a replay.
        while (opening := self._opening.get((me, session_id))) is not None:
            await asyncio.shield(opening)
        if kind in protocol.opening_kinds and not registry.knows(session_id):
            if session_id in self._aborted_early:
                raise aborted(f"session {session_id} aborted: {self._aborted_early[session_id]}")
            opener = str(caller)  # its running sessions here are capped, not everyone's
            registry.check_new(session_id, opener)  # cheap, before the side's (possibly expensive) construction
            opened = self._opening[(me, session_id)] = asyncio.get_running_loop().create_future()
            try:
                side = await asyncio.to_thread(protocol.open, session_id, me, sender, kind, body)
                hosted = registry.create(session_id, HostedSession(session_id, protocol, side), opener)
            finally:
                del self._opening[(me, session_id)]
                opened.set_result(None)
            log.info("session %s opened at %s: %s", session_id, me, protocol.name)
            self._spawn(hosted, self._watchdog(hosted))
        else:
            hosted = registry.get(session_id)
            if hosted.protocol is not protocol:
                raise invalid(f"session {session_id} runs {hosted.protocol.name}, not {protocol.name}")
            registry.touch(session_id)
        if hosted.finished:
            raise precondition(f"session {session_id} is {hosted.side.state.value}")
        async with hosted.lock:
            try:
                outbound = await asyncio.to_thread(hosted.side.receive, sender, kind, body)
            except (ProtocolError, CryptoError):
                # Refused, and it changed nothing; yet a step may have become possible (a rejected share
                # settles a decryption as surely as an accepted one).
                self._dispatch(hosted, await asyncio.to_thread(hosted.side.poll))
                raise
            hosted.progressed = time.monotonic()
        log.info("session %s step at %s: %s/%s from %s", session_id, me, protocol.name, kind, sender)
        self._dispatch(hosted, outbound)
        return hosted

    async def await_result(self, context, envelope: role_pb2.Envelope) -> role_pb2.Envelope:
        require_sender(context, CLIENT)
        caller = principal_of(context)
        assert caller is not None  # require_sender found one
        if self._long_polls[caller] >= MAX_LONG_POLLS_PER_CALLER:
            raise exhausted(f"{caller} already waits for {MAX_LONG_POLLS_PER_CALLER} results here")
        self._long_polls[caller] += 1
        try:
            return await self._await_result(context, envelope)
        finally:
            self._long_polls[caller] -= 1
            if self._long_polls[caller] <= 0:
                del self._long_polls[caller]

    async def _await_result(self, context, envelope: role_pb2.Envelope) -> role_pb2.Envelope:
        sender, me = identities(envelope)
        if sender != CLIENT:
            raise denied("results go to the client")
        if envelope.WhichOneof("body") is not None:
            hosted = await self.step(context, envelope)
            try:
                await hosted.settled.wait()
            except asyncio.CancelledError:  # the client gave up on a session it opened: nobody keeps it
                self._spawn(hosted, self.abort_everywhere(hosted, "the client cancelled the session"))
                raise
        else:
            hosted = self._hosted(me, envelope.session_id)
            await hosted.settled.wait()
        published = hosted.side.result()
        if published is None:
            if hosted.side.state.name == "ABORTED":
                raise aborted(f"session {envelope.session_id} aborted: {hosted.side.abort_reason}")
            raise precondition(f"{me} publishes no result in {hosted.protocol.name}")
        kind, body = published
        return wrap(envelope.session_id, me, CLIENT, hosted.protocol, kind, body)

    def test_record(self, context, envelope: role_pb2.Envelope) -> role_pb2.Envelope:
        require_sender(context, CLIENT)
        if not self.test_mode:
            raise precondition("test records exist only in test mode")
        _, me = identities(envelope)
        hosted = self._hosted(me, envelope.session_id)
        record = hosted.side.test_record()
        if record is None:
            raise precondition(f"{me} has no test record for session {envelope.session_id}")
        kind, body = record
        return wrap(envelope.session_id, me, CLIENT, hosted.protocol, kind, body)

    async def abort_from_peer(self, context, request: common_pb2.AbortRequest) -> None:
        """From the client or a participant of the session (as the side defines them); anyone else is refused.
        An abort that meets the session being opened here waits for the opening and then aborts it; the client's
        abort of a session not (yet) known here is remembered, so that its opening, if it comes, is refused."""
        principal = principal_of(context)
        try:
            sender = Identity.parse(request.sender) if request.sender else (principal.single if principal else None)
            receivers = [Identity.parse(request.receiver)] if request.receiver else None
        except ValueError as error:
            raise invalid(f"abort address: {error}") from None
        if sender is None or principal is None or not principal.covers(sender):
            raise denied(f"{principal or 'an unidentified caller'} may not speak for {sender or 'nobody'}")
        reason = clean_reason(request.reason or f"aborted by {sender}")
        openings = [future for (me, session_id), future in self._opening.items() if session_id == request.session_id
                    and (receivers is None or me in receivers)]
        if openings:  # each is one side's construction in a thread: bounded by the protocol's opening work
            await asyncio.gather(*(asyncio.shield(future) for future in openings))
        if receivers is None:
            receivers = [me for me, registry in self._sessions.items() if registry.knows(request.session_id)]
            if not receivers:
                if sender == CLIENT:
                    self._remember_early_abort(request.session_id, reason)
                raise precondition(f"unknown session {request.session_id}")
        targets = [self._hosted(me, request.session_id) for me in receivers]
        for hosted in targets:
            if not hosted.side.may_abort(sender):
                raise denied(f"{sender} may not abort {hosted.side.identity}'s side of {request.session_id}")
        for hosted in targets:
            if hosted.side.state.name != "ABORTED":
                # Also after this side finished: its result may be one part of a release that failed elsewhere.
                hosted.announced = True
                hosted.abort(reason, withdraw_result=True)
                log.info("session %s aborted at %s by %s: %s", request.session_id, hosted.side.identity, sender, reason)

    def _remember_early_abort(self, session_id: str, reason: str) -> None:
        check_session_id(session_id)  # a malformed id opens nothing: nothing to remember
        self._aborted_early[session_id] = reason
        self._aborted_early.move_to_end(session_id)
        while len(self._aborted_early) > EARLY_ABORTS_KEPT:
            self._aborted_early.popitem(last=False)

    # ------------------------------------------------------------------ sending and events
    def _spawn(self, hosted: HostedSession, coroutine) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coroutine)
        hosted.tasks.add(task)
        task.add_done_callback(hosted.tasks.discard)
        return task

    def _dispatch(self, hosted: HostedSession, outbound: list[Outbound]) -> None:
        for message in outbound:
            send = self._spawn(hosted, self._send(hosted, message))
            hosted.sends.add(send)
            send.add_done_callback(hosted.sends.discard)
        if hosted.finished and not hosted.settled.is_set() and not hosted.settling:
            hosted.settling = True
            _log_end(hosted)
            if hosted.side.state.name == "ABORTED" and hosted.side.announce_abort and not hosted.announced:
                self._spawn(hosted, self._announce_abort(hosted))
            self._spawn(hosted, self._settle(hosted))

    async def _settle(self, hosted: HostedSession) -> None:
        """Hand out the result once this side's last messages were sent (or failed): a client that collects the
        traffic logs next then finds them there. A peer that does not answer delays it by SETTLE_WAIT_S at
        most; an aborted side settles at once."""
        pending = [task for task in hosted.sends if not task.done()]
        if pending and hosted.side.state.name != "ABORTED":
            await asyncio.wait(pending, timeout=SETTLE_WAIT_S)
        hosted.settled.set()

    async def _send(self, hosted: HostedSession, message: Outbound) -> None:
        side = hosted.side
        lock = hosted.send_locks.setdefault(message.to, asyncio.Lock())
        # At most MAX_IN_FLIGHT_PER_HOST calls to one host at a time, and the envelope (a copy of the body) is
        # built only then: X_aux to 1 000 logical parties would otherwise be 1 000 copies in memory at once.
        in_flight = self._in_flight.setdefault(self._peers.host_of(message.to),
                                               asyncio.Semaphore(MAX_IN_FLIGHT_PER_HOST))
        async with lock, in_flight:  # FIFO: messages to one receiver leave in the order they were made
            if side.state.name == "ABORTED":
                return
            envelope = wrap(hosted.session_id, side.identity, message.to, hosted.protocol, message.kind, message.body)
            metadata = ((CALL_ID_METADATA_KEY, new_call_id()),)  # one message, one call id, however many attempts
            started, attempt = time.monotonic(), 0
            while True:
                attempt += 1
                try:
                    await self._stub(message.to).Step(envelope, metadata=metadata, timeout=side.deadline_seconds)
                    reason = None
                    break
                except grpc.aio.AioRpcError as error:
                    # A side's last message leaves as it finishes: retry it too, unless the side aborted.
                    pause = _retry_pause(error.code(), error.details(), attempt, time.monotonic() - started,
                                         side.deadline_seconds)
                    if pause is not None and side.state.name != "ABORTED":
                        await asyncio.sleep(pause)
                        continue
                    reason = f"{error.code().name}: {error.details()}"
                    log.warning("session %s: %s to %s failed: %s", hosted.session_id, message.kind, message.to, reason)
                    break
        if reason is not None:
            await self._event(hosted, lambda: side.on_undeliverable(message.to, message.kind, reason))
        elif type(side).on_delivered is not RoleSide.on_delivered:  # outside the send locks
            await self._event(hosted, lambda: side.on_delivered(message.to, message.kind))

    async def _event(self, hosted: HostedSession, answer: Callable[[], list[Outbound]]) -> None:
        if hosted.finished:
            return
        async with hosted.lock:
            try:
                outbound = await asyncio.to_thread(answer)
            except (ProtocolError, CryptoError) as error:
                if hosted.finished:  # the side aborted itself: tell the others
                    self._dispatch(hosted, [])
                else:
                    await self.abort_everywhere(hosted, str(error))
                return
        self._dispatch(hosted, outbound)

    async def _watchdog(self, hosted: HostedSession) -> None:
        """The session's deadline, every `deadline_seconds`; and, for a side that has one, its step deadline:
        `step_deadline_seconds` after it last took a message (its own computation meanwhile does not count)."""
        side = hosted.side
        deadline_at = time.monotonic() + side.deadline_seconds
        while not hosted.finished:
            step = side.step_deadline_seconds
            # A side may set its step deadline as it takes a message (the ceremony's opening names it): looked at
            # again every STEP_CHECK_S.
            wake = deadline_at if step is None else min(deadline_at, hosted.progressed + step,
                                                         time.monotonic() + STEP_CHECK_S)
            try:
                await asyncio.wait_for(hosted.settled.wait(), max(wake - time.monotonic(), 0.0))
            except TimeoutError:
                if time.monotonic() >= deadline_at:
                    deadline_at = time.monotonic() + side.deadline_seconds
                    await self._event(hosted, side.on_deadline)
                elif step is not None and time.monotonic() >= hosted.progressed + step:
                    await self._event(hosted, lambda: self._step_deadline(hosted, step))

    @staticmethod
    def _step_deadline(hosted: HostedSession, step: float) -> list[Outbound]:
        """Under the session's lock: a message taken while the watchdog waited for the lock is progress."""
        if time.monotonic() - hosted.progressed < step:
            return []
        hosted.progressed = time.monotonic()  # a side that lets it pass gets another step
        return hosted.side.on_step_deadline()

    async def abort_everywhere(self, hosted: HostedSession, reason: str) -> None:
        if hosted.finished:
            return
        hosted.abort(reason)
        _log_end(hosted)
        await self._announce_abort(hosted)

    async def _announce_abort(self, hosted: HostedSession) -> None:
        side, reason = hosted.side, hosted.side.abort_reason
        hosted.announced = True
        others = [p for p in side.participants if p != side.identity]
        await asyncio.gather(*(self._stub(p).AbortSession(common_pb2.AbortRequest(
            session_id=hosted.session_id, reason=f"{side.identity}: {reason}", sender=str(side.identity),
            receiver=str(p)), timeout=ABORT_TIMEOUT_S) for p in others), return_exceptions=True)

    def _stub(self, to: Identity) -> role_pb2_grpc.RoleStub:
        return role_pb2_grpc.RoleStub(self._peers.channel(to))

    async def close(self) -> None:
        for registry in self._sessions.values():
            for session_id in registry.open_ids():
                for task in list(registry.get(session_id).tasks):
                    task.cancel()


def _again(error: BaseException) -> BaseException:
    """The refusal a first attempt got, raised anew for its retry."""
    if isinstance(error, ProtocolError):
        return ProtocolError(error.kind, str(error))
    return type(error)(*error.args)


def _log_end(hosted: HostedSession) -> None:
    side = hosted.side
    if side.state.name == "ABORTED":
        log.info("session %s aborted at %s: %s", hosted.session_id, side.identity, side.abort_reason)
    else:
        log.info("session %s completed at %s", hosted.session_id, side.identity)
