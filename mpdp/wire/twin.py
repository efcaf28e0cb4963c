"""The in-process twin of the network: the same role sides and registries as the real hosts, every
message serialised as the wire carries it (an Envelope) and delivered in a random order, the order
between one sender and one receiver kept. Used by tests and by experiments' simulation mode.

A refused message is recorded and changes nothing; deadlines are not modelled.
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
from mpdp.wire.envelope import identities, unwrap, wrap
from mpdp.wire.traffic import label_of


class InProcessNetwork:
    def __init__(self, session_id: str, registries: dict[Identity, dict[str, RoleProtocol]], rng: random.Random):
        self.session_id = session_id
        self.registries = registries
        self.rng = rng
        self.sides: dict[Identity, RoleSide] = {}
        self.messages: Counter[tuple[str, str, str]] = Counter()  # (from role, to role, label) → count
        self.refused: list[tuple[Identity, Identity, str, str]] = []  # (sender, receiver, label, reason)
        self._queues: dict[tuple[Identity, Identity], deque[bytes]] = defaultdict(deque)

    def send(self, sender: Identity, receiver: Identity, protocol: str, kind: str, body) -> None:
        """Queue one message (the client's, or any role's) as its serialised envelope."""
        registry = self.registries[receiver] if receiver in self.registries else self.registries[sender]
        envelope = wrap(self.session_id, sender, receiver, registry[protocol], kind, body)
        self._queues[(sender, receiver)].append(envelope.SerializeToString())

    def _post(self, sender: Identity, protocol: RoleProtocol, outbound: list[Outbound]) -> None:
        for message in outbound:
            envelope = wrap(self.session_id, sender, message.to, protocol, message.kind, message.body)
            self._queues[(sender, message.to)].append(envelope.SerializeToString())

    @property
    def pending(self) -> int:
        return sum(len(queue) for queue in self._queues.values())

    def run(self, stop_when: Callable[["InProcessNetwork"], bool] | None = None) -> None:
        """Deliver until no message is left (or `stop_when` says so)."""
        while self.pending:
            if stop_when is not None and stop_when(self):
                return
            sender, receiver = self.rng.choice([key for key, queue in self._queues.items() if queue])
            self.deliver(role_pb2.Envelope.FromString(self._queues[(sender, receiver)].popleft()))

    def deliver(self, envelope: role_pb2.Envelope) -> None:
        sender, receiver = identities(envelope)
        label = label_of("Step", envelope)
        self.messages[(sender.role, receiver.role, label)] += 1
        if receiver == CLIENT:
            return  # results to the client are read from the sides
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
            return
        self._post(receiver, protocol, outbound)
        origin = self.sides.get(sender)
        if origin is not None and type(origin).on_delivered is not RoleSide.on_delivered:  # as the host does
            self._post(sender, protocol, origin.on_delivered(receiver, kind))
