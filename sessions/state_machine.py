"""What every protocol session shares: a state, the rule that steps happen in
order, and an abort that ends the session for good."""

from __future__ import annotations

import enum

from sessions.errors import aborted, precondition


class SessionStateMachine:
    """Subclasses define a `State` enum with DONE and ABORTED members."""

    State: type[enum.Enum]

    def __init__(self, session_id: str, initial: enum.Enum):
        self.session_id = session_id
        self.state = initial
        self.abort_reason = ""

    @property
    def finished(self) -> bool:
        return self.state in (self.State.DONE, self.State.ABORTED)

    def _require(self, state: enum.Enum, step: str) -> None:
        if self.state is self.State.ABORTED:
            raise aborted(f"session {self.session_id} was aborted: {self.abort_reason}")
        if self.state is not state:
            raise precondition(f"{step} is not allowed while the session is {self.state.value}")

    def abort(self, reason: str) -> None:
        if not self.finished:
            self.state = self.State.ABORTED
            self.abort_reason = reason
            self._forget()

    def _forget(self) -> None:
        """Drop intermediate values on abort; nothing partial survives."""
