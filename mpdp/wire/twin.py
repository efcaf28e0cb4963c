"""The in-process twin of the network: the same role sides and registries as the real hosts, every
message serialised as the wire carries it (an Envelope) and delivered in a random order, the order
between one sender and one receiver kept. Used by the tests (the quick suite runs every protocol through it); the
experiments' simulation mode is a reference computation and does not use it.

A refused message is recorded and changes nothing. Each message has a call id, and a retried one (the same
call id) is answered as its first attempt was, never handed to a side twice (mpdp.wire.retries), as the
hosts do. `TwinFaults` makes the network unreliable: a message is duplicated (its answer was lost and it
is sent again under its call id), delayed (others overtake it, except its sender's later ones to the same
receiver) or dropped (undeliverable after every retry: its sender's side hears so, and an abort reaches
every participant as the hosts announce it). Deadlines pass only when `expire()` says so.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict, deque
from typing import Callable

from mpdp.cryptocore.errors import CryptoError
from mpdp.proto.v1 import role_pb2
from mpdp.sessions.errors import ProtocolError, precondition
from mpdp.sessions.identity import CLIENT, Identity
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import RoleSide
from mpdp.wire import retries
from mpdp.wire.envelope import identities, unwrap, wrap
from mpdp.wire.traffic import label_of, new_call_id


class TwinFaults:
    """What the twin's network does to each message: with these probabilities, a message is duplicated, delayed
    or dropped. The client's messages are only duplicated (the launcher retries a call whose answer it lost);
    one it cannot deliver is its own failure to report, not a session's."""

    def __init__(self, rng: random.Random, duplicate: float = 0.0, delay: float = 0.0, drop: float = 0.0):
        self.rng, self.duplicate, self.delay, self.drop = rng, duplicate, delay, drop
        self.seen: Counter[str] = Counter()  # fate → count

    def fate(self, sender: Identity) -> str:
        draw = self.rng.random()
        fates = (("duplicate", self.duplicate),) if sender == CLIENT else (
            ("drop", self.drop), ("duplicate", self.duplicate), ("delay", self.delay))
        for fate, chance in fates:
            if draw < chance:
                self.seen[fate] += 1
                return fate
            draw -= chance
        return "deliver"


class InProcessNetwork:
    def __init__(self, session_id: str, registries: dict[Identity, dict[str, RoleProtocol]], rng: random.Random,
                 faults: TwinFaults | None = None):
        self.session_id = session_id
        self.registries = registries
        self.rng = rng
        self.faults = faults
        self.sides: dict[Identity, RoleSide] = {}
        self.messages: Counter[tuple[str, str, str]] = Counter()  # (from role, to role, label) → count
        self.refused: list[tuple[Identity, Identity, str, str]] = []  # (sender, receiver, label, reason)
        self.retried: Counter[str] = Counter()  # label → retries answered as their first attempt
        self._queues: dict[tuple[Identity, Identity], deque[tuple[str, bytes]]] = defaultdict(deque)
        self._answered: retries.AnsweredCalls[str] = retries.AnsweredCalls()  # "": taken; else the refusal
        self._delayed: set[str] = set()
        self._duplicated: set[str] = set()
        self._announced: set[Identity] = set()

    def send(self, sender: Identity, receiver: Identity, protocol: str, kind: str, body) -> None:
        """Queue one message (the client's, or any role's) as its serialised envelope."""
        registry = self.registries[receiver] if receiver in self.registries else self.registries[sender]
        envelope = wrap(self.session_id, sender, receiver, registry[protocol], kind, body)
        self._queues[(sender, receiver)].append((new_call_id(), envelope.SerializeToString()))

    def _post(self, sender: Identity, protocol: RoleProtocol, outbound: list[Outbound]) -> None:
        for message in outbound:
            envelope = wrap(self.session_id, sender, message.to, protocol, message.kind, message.body)
            self._queues[(sender, message.to)].append((new_call_id(), envelope.SerializeToString()))

    @property
    def pending(self) -> int:
        return sum(len(queue) for queue in self._queues.values())

    def run(self, stop_when: Callable[["InProcessNetwork"], bool] | None = None) -> None:
        """Deliver until no message is left (or `stop_when` says so)."""
        while self.pending:
            if stop_when is not None and stop_when(self):
                return
            sender, receiver = self.rng.choice([key for key, queue in self._queues.items() if queue])
            queue = self._queues[(sender, receiver)]
            call_id, data = queue[0]
            origin = self.sides.get(sender)
            if origin is not None and origin.state.name == "ABORTED":  # a host sends nothing for an aborted side
                queue.popleft()
                continue
            fate = self.faults.fate(sender) if self.faults is not None else "deliver"
            if fate == "delay" and call_id not in self._delayed and len(self._queues) > 1:
                self._delayed.add(call_id)  # others overtake it once; its sender's later ones to receiver do not
                continue
            queue.popleft()
            if fate == "drop":
                self._undeliverable(sender, receiver, role_pb2.Envelope.FromString(data))
                continue
            self.deliver(role_pb2.Envelope.FromString(data), call_id)
            if fate == "duplicate" and call_id not in self._duplicated:
                self._duplicated.add(call_id)  # the answer was lost: the sender tries again before its next message
                queue.appendleft((call_id, data))

    def expire(self) -> None:
        """Every unfinished side's deadline passes (as its host's watchdog would report it), then deliver."""
        for identity, side in list(self.sides.items()):
            if not side.finished:
                self._event(identity, side.on_deadline)
        self.run()

    def deliver(self, envelope: role_pb2.Envelope, call_id: str = "") -> None:
        sender, receiver = identities(envelope)
        label = label_of("Step", envelope)
        self.messages[(sender.role, receiver.role, label)] += 1
        if receiver == CLIENT:
            return  # results to the client are read from the sides
        fingerprint = retries.digest(envelope.SerializeToString(deterministic=True))
        key = f"{receiver}\0{self.session_id}"
        if call_id and (first := self._answered.previous(str(sender), key, call_id, fingerprint)) is not None:
            self.retried[label] += 1
            if first:  # refused the first time: refused again, and still nothing changed
                self.refused.append((sender, receiver, label, first))
            return
        self._answered.record(str(sender), key, call_id, fingerprint, self._take(envelope, sender, receiver, label))

    def _take(self, envelope: role_pb2.Envelope, sender: Identity, receiver: Identity, label: str) -> str:
        """The message to its receiver's side: "" if taken, else the reason it was refused."""
        protocol, kind, body = unwrap(envelope, self.registries[receiver])
        try:
            side = self.sides.get(receiver)
            if side is None:
                if kind not in protocol.opening_kinds:
                    raise precondition(f"{receiver} has no session {self.session_id}")
                side = self.sides[receiver] = protocol.open(self.session_id, receiver, sender, kind, body)
            outbound = side.receive(sender, kind, body)
        except (ProtocolError, CryptoError) as error:
            self.refused.append((sender, receiver, label, str(error)))
            if receiver in self.sides:
                self._post(receiver, protocol, self.sides[receiver].poll())
                self._announce_if_aborted(receiver)
            return str(error)
        self._post(receiver, protocol, outbound)
        self._announce_if_aborted(receiver)
        origin = self.sides.get(sender)
        if origin is not None and type(origin).on_delivered is not RoleSide.on_delivered:  # as the host does
            self._event(sender, lambda: origin.on_delivered(receiver, kind))
        return ""

    def _undeliverable(self, sender: Identity, receiver: Identity, envelope: role_pb2.Envelope) -> None:
        label = label_of("Step", envelope)
        if sender == CLIENT or sender not in self.sides:
            return
        side = self.sides[sender]
        self._event(sender, lambda: side.on_undeliverable(receiver, label, "UNAVAILABLE: dropped by the twin"))

    def _event(self, identity: Identity, answer: Callable[[], list[Outbound]]) -> None:
        """A side answers an event (a deadline, an undeliverable or delivered message); raising aborts it, and
        its abort is announced to every participant, as the host does."""
        side = self.sides[identity]
        if side.finished:
            return
        protocol = self._protocol_of(identity)
        try:
            self._post(identity, protocol, answer())
        except (ProtocolError, CryptoError) as error:
            side.abort(str(error))
        self._announce_if_aborted(identity)

    def _announce_if_aborted(self, identity: Identity) -> None:
        side = self.sides[identity]
        if side.state.name != "ABORTED" or identity in self._announced or not side.announce_abort:
            return
        self._announced.add(identity)
        for participant in side.participants:
            other = self.sides.get(participant)
            if participant != identity and other is not None and other.may_abort(identity) and \
                    other.state.name != "ABORTED":
                self._announced.add(participant)  # told by a peer: it does not announce again (the host's rule)
                other.abort(f"{identity}: {side.abort_reason}", withdraw_result=True)

    def _protocol_of(self, identity: Identity) -> RoleProtocol:
        side = self.sides[identity]
        return next(p for p in self.registries[identity].values() if isinstance(side, p.sides))
