"""What every Pathak side (the leader, the followers and Charlie) shares: the
dataflow steps, local self-delivery, and Stage 3's additive sharing."""

from __future__ import annotations

import enum
import time
from abc import ABC, abstractmethod
from collections import Counter

from mpdp.proto.v1 import common_pb2, pathak_pb2
from mpdp.protocols.pathak import ring
from mpdp.protocols.pathak.parameters import PathakParameters
from mpdp.sessions.errors import denied, invalid, precondition
from mpdp.sessions.identity import CLIENT, CURATOR, Identity, party
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.side import RoleSide, handles


class State(enum.Enum):
    OPEN = "open"
    RUNNING = "running"
    DONE = "done"
    ABORTED = "aborted"


class PathakSide(RoleSide, ABC):
    State = State
    names_receivers = False  # a routed share's receiver is one edge of the secret permutation π1

    def __init__(self, session_id: str, me: Identity, parameters: PathakParameters):
        super().__init__(session_id, State.OPEN)
        self.identity = me
        self.parameters = parameters
        self.done_steps: set[str] = set()
        self.self_deliveries: Counter[str] = Counter()
        self.started_at = time.monotonic()
        self.timing: dict[str, float] = {}
        self.own_vector: list[int] | None = None
        self.own_share: list[int] | None = None
        self.shares: dict[Identity, list[int]] = {}
        self.published: list[int] | None = None

    @property
    def participants(self) -> list[Identity]:
        return [party(j) for j in range(1, self.parameters.parties + 1)] + [CURATOR]

    @property
    def deadline_seconds(self) -> float:  # type: ignore[override]
        return self.parameters.deadline_seconds

    def result(self) -> tuple[str, object] | None:
        """Stage 3 step 3: this participant's share of K·ŵˢ, for the client."""
        if self.published is None:
            return None
        return "published", pathak_pb2.PathakPublishedShare(
            share=pathak_pb2.AdditiveShare(values=ring.to_bytes(self.published)),
            fractional_bits=self.parameters.fractional_bits,
            parties=self.parameters.parties,
            timing=[common_pb2.StageTiming(stage=s, seconds=t) for s, t in self.timing.items()],
            self_deliveries=[pathak_pb2.KindCount(kind=k, count=c) for k, c in sorted(self.self_deliveries.items())],
        )

    @abstractmethod
    def steps(self) -> list:
        """The participant's steps in protocol order; each returns whether it ran."""

    def receive(self, sender: Identity | None, kind: str, body) -> list[Outbound]:
        """Store one message (its handler checks it), then run every step that became possible."""
        if kind not in self.handlers:
            raise invalid(f"{type(self).__name__} takes no '{kind}' messages")
        if kind not in ("open", "start") and self.state is not State.RUNNING:
            # Peers may start before us: their messages are stored while we are open.
            self._require(State.OPEN, kind)
        self.handle(sender, kind, body)  # type: ignore[arg-type]
        outbound: list[Outbound] = []
        steps = self.steps() + [self._step_share, self._step_finish]
        while self.state is State.RUNNING and any(step(outbound) for step in steps):
            pass
        return outbound

    def _emit(self, outbound: list[Outbound], to: Identity, kind: str, body) -> None:
        if to == self.identity:
            self.self_deliveries[kind] += 1
            self.handle(to, kind, body)
        else:
            outbound.append(Outbound(to, kind, body))

    def _once(self, name: str) -> bool:
        if name in self.done_steps:
            return False
        self.done_steps.add(name)
        return True

    def _mark(self, stage: str) -> None:
        self.timing[stage] = time.monotonic() - self.started_at

    @staticmethod
    def _expect(sender: Identity | None, *allowed: Identity) -> None:
        if sender not in allowed:
            raise denied(f"{sender or 'an unidentified caller'} may not send this message")

    def _from_party(self, sender: Identity | None, only: int | None = None) -> int:
        if sender is None or sender.role != "party" or not 1 <= sender.id <= self.parameters.parties:
            raise denied(f"{sender or 'an unidentified caller'} is not a party of this session")
        if only is not None and sender.id != only:
            raise denied(f"this message comes from party {only}, not {sender}")
        return sender.id

    @handles("open")
    def take_open(self, sender, body) -> None:
        """The session was made from this message's parameters; only the client opens one."""
        self._expect(sender, CLIENT)
        self._require(State.OPEN, "open")
        if not self._once("open"):
            raise precondition(f"session {self.session_id} is already open (replay)")

    @handles("start")
    def take_start(self, sender, body) -> None:
        self._expect(sender, CLIENT)
        self._require(State.OPEN, "start")
        self.state = State.RUNNING

    @handles("share")
    def take_share(self, sender, body) -> None:
        """Stage 3 step 3: another participant's additive share."""
        if sender not in self.participants or sender == self.identity:
            raise denied(f"{sender or 'an unidentified caller'} is not another participant of this session")
        if sender in self.shares:
            raise precondition(f"{sender}'s share arrived twice")
        self.shares[sender] = ring.from_bytes(body.values, self.parameters.dimension)

    def _step_share(self, out) -> bool:
        """Stage 3 step 3: K+1 uniform shares in Z_{2^128}, one to each other participant."""
        if self.own_vector is None or not self._once("share"):
            return False
        shares = ring.split(self.own_vector, self.parameters.parties + 1)
        self.own_share = shares.pop()
        others = [p for p in self.participants if p != self.identity]
        for receiver, share in zip(others, shares):
            self._emit(out, receiver, "share", pathak_pb2.AdditiveShare(values=ring.to_bytes(share)))
        return True

    def _step_finish(self, out) -> bool:
        if self.own_share is None or len(self.shares) < self.parameters.parties or not self._once("finish"):
            return False
        self.published = ring.add([self.own_share, *self.shares.values()])
        self.state = State.DONE
        self._mark("stage3_done")
        self._forget_inputs()
        return True

    def _forget_inputs(self) -> None:
        """Once this participant's share of K·ŵˢ is made, nothing it was made from stays in memory."""
        self.own_vector = self.own_share = None
        self.shares.clear()

    def _forget(self) -> None:
        self._forget_inputs()
        self.published = None
