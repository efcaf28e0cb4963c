"""A fresh Paillier keypair made while a role is idle, for its next session.

The leader makes a new ξ for every Pathak session; generating it (two 1024-bit primes) sat on the session's
critical path, before the leader's first commitments. A key made after the previous session is just as fresh:
it depends on no input, is held only in this process, and is handed out once.
"""

from __future__ import annotations

import threading

from mpdp.cryptocore.paillier.keypair import KeyPair, generate_keypair

_lock = threading.Lock()
_ready: dict[int, KeyPair] = {}
_making: set[int] = set()


def prepare(bits: int) -> None:
    """Start making one keypair of `bits` in a background thread, unless one is held or being made."""
    with _lock:
        if bits in _ready or bits in _making:
            return
        _making.add(bits)

    def make() -> None:
        try:
            keypair = generate_keypair(bits)
            with _lock:
                _ready[bits] = keypair
        finally:
            with _lock:
                _making.discard(bits)

    threading.Thread(target=make, name="key-reserve", daemon=True).start()


def take(bits: int) -> KeyPair:
    """The prepared keypair (removed: never handed out twice), or a new one made now."""
    with _lock:
        keypair = _ready.pop(bits, None)
    return keypair if keypair is not None else generate_keypair(bits)


def held(bits: int) -> bool:
    with _lock:
        return bits in _ready
