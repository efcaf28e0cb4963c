"""Retries are not replays: a message is taken once per call id.

A sender that loses the answer to a call (a timeout, a connection reset, a receiver too busy to answer in time)
sends the same envelope again under the same call id (mpdp.wire.host, the launcher's ceremony). The receiver then
answers it as it answered the first time (the same acknowledgement, the same refusal) without handing it to the
side again, where it would be refused as a replay. A call id is the sender's: it is recorded per sender, and a
second, different envelope under a call id already answered is refused, not taken. Both the hosts and the
in-process twin keep this record, so the twin shows what a retried message does.

Bounded: at most MAX_CALLS_PER_SENDER call ids per sender principal (the oldest are forgotten first); a retry
comes within seconds of its first attempt, far sooner than that many other calls from the same sender.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, TypeVar

from mpdp.sessions.errors import invalid

MAX_CALLS_PER_SENDER = 20_000
MAX_CALL_ID_LENGTH = 64

T = TypeVar("T")


def digest(envelope_bytes: bytes) -> bytes:
    return hashlib.sha256(envelope_bytes).digest()


@dataclass
class _Answer(Generic[T]):
    digest: bytes
    answer: T


class AnsweredCalls(Generic[T]):
    """What each (sender, call id) was answered: `T` is the host's pending or finished answer, the twin's outcome."""

    def __init__(self, per_sender: int = MAX_CALLS_PER_SENDER):
        self._calls: dict[str, OrderedDict[tuple[str, str], _Answer[T]]] = {}
        self._per_sender = per_sender

    def previous(self, principal: str, session_id: str, call_id: str, envelope_digest: bytes) -> T | None:
        """The answer already given to this call, or None if it is the call's first attempt. A different envelope
        under an answered call id is refused: a call id names one message."""
        if not call_id:
            return None
        entry = self._calls.get(principal, OrderedDict()).get((session_id, call_id[:MAX_CALL_ID_LENGTH]))
        if entry is None:
            return None
        if entry.digest != envelope_digest:
            raise invalid(f"call id {call_id[:MAX_CALL_ID_LENGTH]} was already used for another message")
        return entry.answer

    def record(self, principal: str, session_id: str, call_id: str, envelope_digest: bytes, answer: T) -> None:
        if not call_id:
            return
        calls = self._calls.setdefault(principal, OrderedDict())
        calls[(session_id, call_id[:MAX_CALL_ID_LENGTH])] = _Answer(envelope_digest, answer)
        while len(calls) > self._per_sender:
            calls.popitem(last=False)

    def forget(self, principal: str, session_id: str, call_id: str) -> None:
        """A call whose first attempt changed nothing and left no session to answer from (a refused opening)."""
        self._calls.get(principal, OrderedDict()).pop((session_id, call_id[:MAX_CALL_ID_LENGTH]), None)
