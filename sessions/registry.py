"""Sessions of one role, by id: creation refuses replays, lookups refuse unknown ids.

Finished sessions are kept (bounded) so that traffic and results stay
queryable; idle unfinished ones expire. A running session is never evicted:
when every slot holds one, a new session is refused (RESOURCE_EXHAUSTED).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Generic, Protocol, TypeVar

from sessions.errors import exhausted, invalid, precondition

MAX_SESSION_ID_LENGTH = 128


class Session(Protocol):
    @property
    def finished(self) -> bool: ...

    def abort(self, reason: str) -> None: ...


S = TypeVar("S", bound=Session)


def check_session_id(session_id: str) -> str:
    if not session_id or len(session_id) > MAX_SESSION_ID_LENGTH or not session_id.isprintable():
        raise invalid("session id must be 1–128 printable characters")
    return session_id


class SessionRegistry(Generic[S]):
    def __init__(self, keep: int = 256, idle_timeout_s: float = 600.0):
        self._sessions: OrderedDict[str, tuple[S, float]] = OrderedDict()
        self._keep = keep
        self._idle_timeout_s = idle_timeout_s

    def check_new(self, session_id: str) -> None:
        """The cheap checks of `create`, for callers to run before building an expensive session."""
        check_session_id(session_id)
        self._expire()
        if session_id in self._sessions:
            raise precondition(f"session {session_id} already exists (replay)")
        if len(self._sessions) >= self._keep and not any(kept.finished for kept, _ in self._sessions.values()):
            raise exhausted(f"{len(self._sessions)} sessions are running here; try again when one has finished")

    def create(self, session_id: str, session: S) -> S:
        check_session_id(session_id)
        self._expire()
        if session_id in self._sessions:
            raise precondition(f"session {session_id} already exists (replay)")
        if len(self._sessions) >= self._keep:
            # Forget the oldest *finished* session; a running one is never evicted.
            finished = next((sid for sid, (kept, _) in self._sessions.items() if kept.finished), None)
            if finished is None:
                raise exhausted(f"{len(self._sessions)} sessions are running here; try again when one has finished")
            del self._sessions[finished]
        self._sessions[session_id] = (session, time.monotonic())
        return session

    def get(self, session_id: str) -> S:
        check_session_id(session_id)
        entry = self._sessions.get(session_id)
        if entry is None:
            raise precondition(f"unknown session {session_id}")
        return entry[0]

    def knows(self, session_id: str) -> bool:
        return session_id in self._sessions

    def open_ids(self) -> list[str]:
        return [sid for sid, (session, _) in self._sessions.items() if not session.finished]

    def _expire(self) -> None:
        now = time.monotonic()
        for session_id, (session, created) in list(self._sessions.items()):
            if not session.finished and now - created > self._idle_timeout_s:
                session.abort("session timed out")
