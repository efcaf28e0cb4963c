"""Randomizers for ciphertexts sent to a key's owner, made ahead of need: ρ^n mod n² with ρ uniform in Z_n^*
(the only kind `ciphertext.rerandomise_for_key_owner` allows). They depend on nothing but n, so a role that
knows it will send many — the Pathak leader's comparison replies — makes them in a background thread while
it waits for the protocol's earlier steps (the usual offline phase). Each is used once."""

from __future__ import annotations

import threading
from collections import deque

import gmpy2
from phe import PaillierPublicKey

from cryptocore import ciphertext as ct


class OwnerRandomizers:
    def __init__(self, public_key: PaillierPublicKey):
        self.public_key = public_key
        self._ready: deque[int] = deque()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _make(self) -> int:
        n = self.public_key.n
        return int(gmpy2.powmod(ct.random_unit(n), n, self.public_key.nsquare))

    def prepare(self, count: int) -> None:
        """Make up to `count` in a daemon thread; `discard` stops it."""
        def fill() -> None:
            for _ in range(count):
                if self._stop.is_set():
                    return
                self._ready.append(self._make())

        self._thread = threading.Thread(target=fill, name="owner-randomizers", daemon=True)
        self._thread.start()

    def rerandomise(self, ciphertext: int) -> int:
        """ciphertext · ρ^n, with a prepared ρ^n if one is ready (each used once), else a fresh one."""
        try:
            randomizer = self._ready.popleft()
        except IndexError:
            randomizer = self._make()
        return int(ciphertext * randomizer % self.public_key.nsquare)

    @property
    def ready(self) -> int:
        return len(self._ready)

    def discard(self) -> None:
        self._stop.set()
        self._ready.clear()
