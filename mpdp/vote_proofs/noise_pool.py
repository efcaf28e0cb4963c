"""The noise pool: committed noise bits made before any query (docs/malicious-party.md, "The noise pool").

A bit commitment (vote_proofs/noise_bits.py) encrypts 0 or 1 and depends on no query, so a teacher can make its
bits while idle: the offline phase (`fill`). Each bit's proof is bound to the key, the teacher and the bit's pool
position; the aggregator verifies an upload before it enters the pool. A round (the online phase) spends the next
positions in order: the aggregator takes only positions at or past its cursor and moves the cursor past them, so a
position is never spent twice, nor one skipped later. Both ends keep one `NoisePool` per teacher: the teacher its
bits and ciphertexts, the aggregator the ciphertexts and their proofs, which go with the round's contributions to
the key holders (vote_proofs/well_formed.py), who check them again before decrypting. Nothing in the pool derives
from data, so filling it spends no privacy budget. Pools live in the processes' memory, bounded per teacher
(`MAX_POOL_BITS`) and per upload (`MAX_FILL_BITS`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from mpdp.sessions.errors import invalid, precondition

MAX_FILL_BITS = 16_000  # per teacher and upload: about 1.9 kB each with its proof at 2048 bits, < 64 MB at 4096
MAX_POOL_BITS = 32_000  # per teacher, unspent: about 61 MB at 2048 bits at the aggregator, which keeps each proof


def context(key_id: bytes, teacher: int, first: int) -> bytes:
    """Binds an upload's bit proofs to the key, the teacher and their positions (first + the proof's index)."""
    return f"mpdp/noise-pool/{key_id.hex()}/bits of party {teacher} from position {first}".encode()


@dataclass(frozen=True)
class Spent:
    first: int
    bits: list[int]  # the teacher's own; empty at the aggregator
    values: list[int]
    proofs: list[Any] = field(default_factory=list)  # at the aggregator: each bit's proof as uploaded, for the key holders
    uploads: list[int] = field(default_factory=list)  # at the aggregator: each bit's upload's first position


class NoisePool:
    """Positions [cursor, next) of one teacher's committed bits, in order. Thread-safe: rounds run concurrently."""

    def __init__(self, capacity: int = MAX_POOL_BITS):
        self.capacity = capacity
        self._lock = threading.Lock()
        self._cursor = 0
        self._bits: list[int] = []
        self._values: list[int] = []
        self._proofs: list[Any] = []  # the aggregator's: each bit's proof (a MembershipProof message)
        self._uploads: list[int] = []  # the aggregator's: the first position of each bit's upload

    @property
    def cursor(self) -> int:
        return self._cursor

    @property
    def next(self) -> int:
        with self._lock:
            return self._cursor + len(self._values)

    @property
    def available(self) -> int:
        with self._lock:
            return len(self._values)

    def room(self) -> int:
        with self._lock:
            return self.capacity - len(self._values)

    def restart_at(self, first: int) -> None:
        """By the teacher, asked to fill from `first`: what it holds from `first` on never reached the
        aggregator's pool (or the aggregator lost it), so it is dropped; positions before the cursor are never
        made again unless the aggregator starts over below them, and then everything held is dropped."""
        with self._lock:
            if first < self._cursor or first > self._cursor + len(self._values):
                self._cursor, self._bits, self._values, self._proofs, self._uploads = first, [], [], [], []
            else:
                keep = first - self._cursor
                del self._bits[keep:], self._values[keep:], self._proofs[keep:], self._uploads[keep:]

    def append(self, first: int, values: list[int], bits: list[int] | None = None, proofs: list[Any] | None = None
               ) -> None:
        """Verified (aggregator, with their proofs) or made (teacher, with its bits) bits at positions first,
        first + 1, ...; only at the end."""
        with self._lock:
            if first != self._cursor + len(self._values):
                raise precondition(f"the pool's next position is {self._cursor + len(self._values)}, not {first} "
                                   "(a concurrent fill)")
            if len(self._values) + len(values) > self.capacity:
                raise invalid(f"the pool holds at most {self.capacity} unspent bits per teacher")
            self._values.extend(values)
            if bits is not None:
                self._bits.extend(bits)
            if proofs is not None:
                if len(proofs) != len(values):
                    raise invalid("one proof per pooled bit")
                self._proofs.extend(proofs)
                self._uploads.extend([first] * len(values))

    def take_next(self, count: int) -> Spent | None:
        """By the teacher: the next `count` positions, spent here and now; None when fewer are left."""
        with self._lock:
            if len(self._values) < count:
                return None
            spent = Spent(self._cursor, self._bits[:count], self._values[:count])
            del self._bits[:count], self._values[:count]
            self._cursor += count
            return spent

    def take(self, first: int, count: int) -> Spent:
        """By the aggregator: positions [first, first + count), at or past the cursor (a skipped position is
        spent with them: the teacher spent it in a round the aggregator never saw); invalid otherwise."""
        with self._lock:
            if first < self._cursor:
                raise invalid(f"pool positions from {first} are spent (the pool's cursor is {self._cursor}): "
                              "no bit is spent twice")
            skip = first - self._cursor
            if skip + count > len(self._values):
                raise invalid(f"pool positions [{first}, {first + count}) are not in the pool "
                              f"(it holds [{self._cursor}, {self._cursor + len(self._values)}))")
            spent = Spent(first, [], self._values[skip:skip + count], self._proofs[skip:skip + count],
                          self._uploads[skip:skip + count])
            del self._values[:skip + count], self._proofs[:skip + count], self._uploads[:skip + count]
            del self._bits[:skip + count]
            self._cursor = first + count
            return spent


class Pools:
    """One pool per teacher (a process-wide store: the role protocol's factory holds it)."""

    def __init__(self, capacity: int = MAX_POOL_BITS):
        self.capacity = capacity
        self._lock = threading.Lock()
        self._pools: dict[int, NoisePool] = {}

    def of(self, teacher: int) -> NoisePool:
        with self._lock:
            return self._pools.setdefault(teacher, NoisePool(self.capacity))
