"""One role's side of one session, free of gRPC: the host feeds it messages and events and sends
what it returns. Each protocol's sides subclass this (their `State` enum has DONE and ABORTED).

Naming: `<Protocol><Role>Side`, the role as the protocol's spec names it (`DpppTeacherSide`,
`PathakLeaderSide`, `DuServerSide`). Dispatch: a side marks one method per message kind it takes with
`@handles(kind)`; the table kind → method is built once per class, and the registry entry checks it
against the protocol's proto when the role starts (mpdp/sessions/protocol.py)."""

from __future__ import annotations

from typing import Any, Callable, ClassVar, NoReturn, TypeVar

from mpdp.sessions.errors import aborted, invalid
from mpdp.sessions.identity import CLIENT, Identity
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.state_machine import SessionStateMachine

DEFAULT_DEADLINE_S = 120.0

M = TypeVar("M", bound=Callable[..., Any])


def handles(kind: str) -> Callable[[M], M]:
    """Marks a side's method `method(sender, body)` as the handler of one message kind."""

    def mark(method: M) -> M:
        method.handled_kind = kind  # type: ignore[attr-defined]
        return method

    return mark


class RoleSide(SessionStateMachine):
    handlers: ClassVar[dict[str, str]] = {}  # message kind → the name of the method that takes it
    identity: Identity
    deadline_seconds: float = DEFAULT_DEADLINE_S
    # A side that waits on its peers step by step (the key ceremony): how long it waits for its next message
    # after it last took one; None: only the session's deadline.
    step_deadline_seconds: float | None = None
    announce_abort = True  # an aborted side tells its participants; False: it ends quietly (a dropout)
    # Whether an abort for an undeliverable message may name its receiver: the other participants read it, and
    # in a protocol whose routing is secret (Pathak's π1) a receiver names an edge. Elsewhere every receiver
    # follows from public parameters, and naming it tells the operator which host a cut left unreachable.
    names_receivers = True

    @property
    def participants(self) -> list[Identity]:
        """The roles this side exchanges messages with: they are told when it aborts."""
        raise NotImplementedError

    def may_abort(self, sender: Identity) -> bool:
        """Who may abort this side: the client and the participants, unless a protocol says otherwise."""
        return sender == CLIENT or (sender in self.participants and sender != self.identity)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        table = dict(cls.handlers)  # inherited; a subclass may take more kinds or take one differently
        own: dict[str, str] = {}
        for name, member in vars(cls).items():
            kind = getattr(member, "handled_kind", None)
            if kind is None:
                continue
            if kind in own:
                raise TypeError(f"{cls.__name__} handles '{kind}' twice: {own[kind]} and {name}")
            own[kind] = name
        table.update(own)
        cls.handlers = table

    def receive(self, sender: Identity, kind: str, body) -> list[Outbound]:
        """One message (the opening one included), to the method that takes its kind. A refusal raises a
        ProtocolError and changes nothing."""
        return self.handle(sender, kind, body) or []

    def handle(self, sender: Identity, kind: str, body):
        name = self.handlers.get(kind)
        if name is None:
            raise invalid(f"{type(self).__name__} takes no '{kind}' messages")
        return getattr(self, name)(sender, body)

    def poll(self) -> list[Outbound]:
        """Steps that became possible without a new message (after a refused one, say)."""
        return []

    def on_deadline(self) -> list[Outbound]:
        """The deadline passed. Raising aborts the session everywhere; a side that ends quietly (a dropout:
        `announce_abort` False) aborts itself."""
        if not self.announce_abort:
            self.abort("the session's deadline passed")
            return []
        raise aborted(f"session timed out after {self.deadline_seconds:.0f} s")

    def on_step_deadline(self) -> list[Outbound]:
        """No message came for `step_deadline_seconds` since this side last took one. Raising aborts the session
        everywhere."""
        raise aborted(f"no message for {self.step_deadline_seconds:.0f} s")

    def on_undeliverable(self, to: Identity, kind: str, reason: str) -> list[Outbound]:
        """A message could not be delivered (after retries). Raising aborts the session everywhere; a side
        that ends quietly aborts itself."""
        if not self.announce_abort:
            self.abort(self.unreachable_reason(to))
            return []
        raise aborted(self.unreachable_reason(to))

    def unreachable_reason(self, to: Identity | None = None) -> str:
        """The abort reason for an undeliverable message: which session, and which receiver unless
        `names_receivers` is False (never the message's kind: the other participants read it)."""
        if to is not None and self.names_receivers:
            return f"session {self.session_id}: {to} could not be reached"
        return f"session {self.session_id}: a participant could not be reached"

    def fail(self, reason: str) -> NoReturn:
        """Abort (the host tells every participant) and stop the step that found it."""
        self.abort(reason)
        raise aborted(reason)

    def on_delivered(self, to: Identity, kind: str) -> list[Outbound]:
        """A message was delivered. Only called for sides that override this (the host skips the event
        otherwise): a side whose release must wait for its last messages to arrive."""
        return []

    def result(self) -> tuple[str, object] | None:
        """(kind, body) of what this side publishes to the client once DONE; None if it publishes nothing."""
        return None

    def test_record(self) -> tuple[str, object] | None:
        """Test mode only: (kind, body) of what this side drew."""
        return None
