"""Sessions of one role, by id: creation refuses replays, lookups refuse unknown ids.

Finished sessions are kept (bounded) so that traffic and results stay
queryable; unfinished ones that received no message for a while expire. A
running session is never evicted: when every slot holds one, a new session is
refused (RESOURCE_EXHAUSTED). Each opener (the principal that sent a session's
opening message) may hold only a share of the slots with running sessions, so
one opener cannot block the others.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from mpdp.sessions.errors import exhausted, invalid, precondition

MAX_SESSION_ID_LENGTH = 128


class Session(Protocol):
    @property
    def finished(self) -> bool: ...

    def abort(self, reason: str) -> None: ...


S = TypeVar("S", bound=Session)

KEEP = 256
PER_OPENER = 64  # running sessions one opener may hold at one role identity
IDLE_TIMEOUT_S = 300.0


@dataclass
class _Entry(Generic[S]):
    session: S
    opener: str | None
    last_message: float


def check_session_id(session_id: str) -> str:
    if not session_id or len(session_id) > MAX_SESSION_ID_LENGTH or not session_id.isprintable():
        raise invalid("session id must be 1–128 printable characters")
    return session_id


class SessionRegistry(Generic[S]):
    def __init__(self, keep: int = KEEP, idle_timeout_s: float = IDLE_TIMEOUT_S, per_opener: int = PER_OPENER):
        self._sessions: OrderedDict[str, _Entry[S]] = OrderedDict()
        self._keep = keep
        self._idle_timeout_s = idle_timeout_s
        self._per_opener = per_opener

    def check_new(self, session_id: str, opener: str | None = None) -> None:
        """The cheap checks of `create`, for callers to run before building an expensive session."""
        check_session_id(session_id)
        self._expire()
        if session_id in self._sessions:
            raise precondition(f"session {session_id} already exists (replay)")
        if opener is not None and self._running_for(opener) >= self._per_opener:
            raise exhausted(f"{opener} has {self._per_opener} sessions running here; try again when one has finished")
        if len(self._sessions) >= self._keep and not any(entry.session.finished for entry in self._sessions.values()):
            raise exhausted(f"{len(self._sessions)} sessions are running here; try again when one has finished")

    def create(self, session_id: str, session: S, opener: str | None = None) -> S:
        self.check_new(session_id, opener)
        if len(self._sessions) >= self._keep:
            # Forget the oldest *finished* session; a running one is never evicted.
            finished = next(sid for sid, entry in self._sessions.items() if entry.session.finished)
            del self._sessions[finished]
        self._sessions[session_id] = _Entry(session, opener, time.monotonic())
        return session

    def get(self, session_id: str) -> S:
        check_session_id(session_id)
        entry = self._sessions.get(session_id)
        if entry is None:
            raise precondition(f"unknown session {session_id}")
        return entry.session

    def touch(self, session_id: str) -> None:
        """A message for the session arrived: it is not idle."""
        entry = self._sessions.get(session_id)
        if entry is not None:
            entry.last_message = time.monotonic()

    def knows(self, session_id: str) -> bool:
        return session_id in self._sessions

    def open_ids(self) -> list[str]:
        return [sid for sid, entry in self._sessions.items() if not entry.session.finished]

    def _running_for(self, opener: str) -> int:
        return sum(entry.opener == opener and not entry.session.finished for entry in self._sessions.values())

    def _expire(self) -> None:
        now = time.monotonic()
        for entry in list(self._sessions.values()):
            if not entry.session.finished and now - entry.last_message > self._idle_timeout_s:
                entry.session.abort("session timed out")
