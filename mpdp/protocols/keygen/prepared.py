"""Shares a key holder has prepared and not yet written (docs/distributed-keygen.md, "Commit").

A share enters once every holder acknowledged the same digest; it leaves written (the client's
commit), dropped (the client withdrew the ceremony) or expired (no decision within COMMIT_WINDOW_S).
Until then it exists in this process's memory only: dropping it leaves nothing behind.
"""

from __future__ import annotations

import hmac
import threading
import time
from dataclasses import dataclass

from mpdp.cryptocore.paillier.threshold import KeyShare
from mpdp.sessions.errors import invalid, precondition
from mpdp.sessions.identity import Identity

# How long a prepared share waits for the client's decision. The client commits as soon as the last holder
# reports (seconds later); past the window the holder refuses the commit and the client rolls back the others.
COMMIT_WINDOW_S = 600.0
MAX_PREPARED = 4  # per holder: each one is a ceremony the client opened; more are refused


@dataclass
class _Entry:
    share: KeyShare
    digest: bytes
    expires: float


class PreparedShares:
    def __init__(self, window_s: float = COMMIT_WINDOW_S, clock=time.monotonic):
        self.window_s, self._clock = window_s, clock
        self._entries: dict[tuple[Identity, str], _Entry] = {}
        self._lock = threading.Lock()

    def _expire(self) -> None:
        now = self._clock()
        for key in [key for key, entry in self._entries.items() if entry.expires <= now]:
            del self._entries[key]

    def put(self, me: Identity, ceremony: str, share: KeyShare, digest: bytes) -> None:
        with self._lock:
            self._expire()
            if sum(1 for holder, _ in self._entries if holder == me) >= MAX_PREPARED:
                raise precondition(f"{me} already holds {MAX_PREPARED} prepared shares awaiting a decision")
            self._entries[(me, ceremony)] = _Entry(share, digest, self._clock() + self.window_s)

    def take(self, me: Identity, ceremony: str, digest: bytes) -> KeyShare:
        """The share, removed, if `digest` is the one every holder acknowledged; else refused, nothing changed."""
        with self._lock:
            self._expire()
            entry = self._entries.get((me, ceremony))
            if entry is None:
                raise precondition(f"{me} holds no prepared share of key generation {ceremony!r} (never prepared, "
                                   f"withdrawn, or older than {self.window_s:.0f} s)")
            if not hmac.compare_digest(entry.digest, digest):
                raise invalid(f"the commit names another digest than {me} acknowledged in {ceremony!r}")
            del self._entries[(me, ceremony)]
            return entry.share

    def drop(self, me: Identity, ceremony: str) -> None:
        with self._lock:
            self._entries.pop((me, ceremony), None)

    def holds(self, me: Identity, ceremony: str) -> bool:
        with self._lock:
            self._expire()
            return (me, ceremony) in self._entries
