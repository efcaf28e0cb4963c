"""Damgård–Jurik–Nielsen fast Paillier encryption (crypto.md, "Fast encryption").

With h = −x² mod n and h_s = h^n mod n², an encryption of m is
(1 + m·n) · h_s^r mod n² with r of ⌈k/2⌉ bits. h_s^r comes from a fixed-base
table, so encryption costs a few hundred multiplications instead of a
full-length exponentiation. The result is an ordinary Paillier ciphertext.
"""

from __future__ import annotations

import secrets
import threading
from collections import deque

import gmpy2
from phe import PaillierPublicKey

from mpdp.cryptocore.arithmetic.fixed_base import FixedBaseTable
from mpdp.cryptocore.paillier import ciphertext as ct


def generate_hs(public_key: PaillierPublicKey) -> int:
    """h_s = (−x²)^n mod n² for a random unit x."""
    n = public_key.n
    while True:
        x = secrets.randbelow(n - 2) + 2
        if gmpy2.gcd(x, n) == 1:
            break
    h = (-x * x) % n
    return int(gmpy2.powmod(h, n, public_key.nsquare))


# A table costs about as much as 30 plain exponentiations; keys used less than that
# (a per-session key that encrypts a handful of values) never build one.
TABLE_AFTER_USES = 16
MAX_PREPARED_ZEROS = 4096


class FastEncryptor:
    """Encrypts and re-randomises under one public key, with a fixed-base table once it pays off."""

    def __init__(self, public_key: PaillierPublicKey, hs: int, window_bits: int = 8):
        ct.validate(public_key, hs)
        self.public_key = public_key
        self.hs = int(hs)
        self.randomness_bits = (public_key.n.bit_length() + 1) // 2
        self._window_bits = window_bits
        self._uses = 0
        self._table: FixedBaseTable | None = None
        self._table_lock = threading.Lock()
        self._prepared: deque[int] = deque()  # fresh h_s^r made while idle, each taken once

    def precompute(self) -> FixedBaseTable:
        with self._table_lock:
            if self._table is None:
                self._table = FixedBaseTable(self.hs, self.public_key.nsquare, self.randomness_bits,
                                             self._window_bits)
            return self._table

    def precompute_while_idle(self, zeros: int = 0, window_bits: int | None = None) -> None:
        """In a background thread, for a long-lived key a role will use in its next sessions: build the table
        (inline, it would land in the middle of a session: about 0.3 s at 2048 bits), and make up to `zeros`
        fresh encryptions of 0 for `random_zero` to take, one multiplication each instead of a table lookup
        chain, off the next session's critical path. A role that encrypts a handful per session asks for a
        narrower window: 4 bits make a 2 MB table at 2048 bits instead of 17 MB, each use twice as slow."""
        if window_bits is not None and self._table is None:
            self._window_bits = window_bits
        wanted = max(0, min(zeros, MAX_PREPARED_ZEROS) - len(self._prepared))
        if self._table is None or wanted:
            threading.Thread(target=self._prepare, args=(wanted,), name="encryptions of zero", daemon=True).start()

    def _prepare(self, count: int) -> None:
        table = self.precompute()
        for _ in range(count):
            self._prepared.append(int(table.pow(secrets.randbits(self.randomness_bits))))

    @property
    def prepared(self) -> int:
        return len(self._prepared)

    def random_zero(self) -> int:
        """A fresh encryption of 0: h_s^r (prepared while idle, if any is left)."""
        try:
            return self._prepared.popleft()  # deque operations are atomic: each value is taken once
        except IndexError:
            pass
        exponent = secrets.randbits(self.randomness_bits)
        table = self._table
        if table is None:
            self._uses += 1
            if self._uses <= TABLE_AFTER_USES:
                return int(gmpy2.powmod(self.hs, exponent, self.public_key.nsquare))
            table = self.precompute()
        return int(table.pow(exponent))

    def encrypt(self, plaintext: int) -> int:
        """Encrypt a signed integer with |plaintext| < n/2."""
        residue = ct.encode_signed(self.public_key, plaintext)
        n = self.public_key.n
        return int((1 + residue * n) * self.random_zero() % self.public_key.nsquare)

    def rerandomise(self, ciphertext: int) -> int:
        """Same plaintext, fresh randomness: multiply by an encryption of 0."""
        return int(ciphertext * self.random_zero() % self.public_key.nsquare)
