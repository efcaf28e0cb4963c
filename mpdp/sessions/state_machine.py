"""What every protocol session shares: a state, the rule that steps happen in
order, and an abort that ends the session for good."""

from __future__ import annotations

import enum
import threading

from mpdp.sessions.errors import aborted, precondition


class SessionStateMachine:
    """Subclasses define a `State` enum with DONE and ABORTED members."""

    State: type[enum.Enum]

    def __init__(self, session_id: str, initial: enum.Enum):
        self.session_id = session_id
        self.state = initial
        self.abort_reason = ""
        # Work runs in worker threads while an abort may arrive on the event loop: a transition and an
        # abort never interleave, so an abort that lands during a step is never undone by it.
        self._transition_lock = threading.Lock()

    @property
    def _aborted_state(self) -> enum.Enum:
        return self.State["ABORTED"]

    @property
    def finished(self) -> bool:
        return self.state in (self.State["DONE"], self._aborted_state)

    def _require(self, state: enum.Enum, step: str) -> None:
        if self.state is self._aborted_state:
            raise aborted(f"session {self.session_id} was aborted: {self.abort_reason}")
        if self.state is not state:
            raise precondition(f"{step} is not allowed while the session is {self.state.value}")

    def _advance(self, expected: enum.Enum, new: enum.Enum, step: str) -> None:
        """Move from `expected` to `new` atomically; raises (ABORTED / FAILED_PRECONDITION) otherwise."""
        with self._transition_lock:
            self._require(expected, step)
            self.state = new

    def abort(self, reason: str, withdraw_result: bool = False) -> None:
        """End the session for good. A completed one is left alone unless `withdraw_result` (its result was
        only one part of a release that failed elsewhere: nothing partial may stay published)."""
        with self._transition_lock:
            if self.state is self._aborted_state or (self.finished and not withdraw_result):
                return
            self.state = self._aborted_state
            self.abort_reason = reason
        self._forget()

    def _forget(self) -> None:
        """Drop intermediate values on abort; nothing partial survives."""
