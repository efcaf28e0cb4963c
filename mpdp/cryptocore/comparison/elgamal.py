"""Exponential ElGamal in the comparison group: the secure comparison's key (crypto.md, "Secure comparison":
a key with a small plaintext space; docs/protocols/pathak-comparison-key.md).

Enc(m) = (g^s, g^m·h^s) with s uniform in Z_q, h = g^x the owner's public key. Multiplying ciphertexts adds
plaintexts and raising one to r multiplies its plaintext by r, modulo the prime q; the owner reads only whether
a plaintext is zero (b = a^x), which is all a comparison's key holder needs. Exponents are 256 bits and
arithmetic is modulo the 2048-bit p, so a blinded bit costs the value holder two short exponentiations instead
of a full one modulo n².

The group is public and fixed (`comparison_group`), so everything the owner publishes is checked without a proof:
h lies in the subgroup of order q and is not 1, hence a generator, and every ciphertext component that arrives
lies in that subgroup too. A re-randomiser (g^s, h^s) then makes the first component uniform whatever the owner
chose, and the owner's view of an answer is its plaintext's zero test and nothing else.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from functools import cached_property, lru_cache

import gmpy2

from mpdp.cryptocore.arithmetic.fixed_base import FixedBaseTable
from mpdp.cryptocore.arithmetic.shared_exponent import powmod_all
from mpdp.cryptocore.comparison.group import ELEMENT_BYTES, G, P, Q, in_range, members
from mpdp.cryptocore.errors import InvalidCiphertext, InvalidKey
from mpdp.cryptocore.keys.key_checks import fingerprint

KEY_ID_TAG = b"mpdp/elgamal/public-key/v1"
CIPHERTEXT_BYTES = 2 * ELEMENT_BYTES
TABLE_WINDOW_BITS = 6  # 43 products per exponentiation; a table of 0.7 MB per base


@lru_cache(maxsize=8)
def _table(base: int) -> FixedBaseTable:
    """g's table, and one per owner key seen (built once per process: about 5 ms)."""
    return FixedBaseTable(base, P, Q.bit_length(), TABLE_WINDOW_BITS)


@lru_cache(maxsize=16)
def _g_to(exponent: int) -> int:
    return pow(G, exponent, P)


def random_exponent() -> int:
    """Uniform in Z_q."""
    return secrets.randbelow(Q)


def random_multiplier() -> int:
    """Uniform in Z_q^*: a comparison's blinding factor (r·c is uniform in Z_q^* for every c ≠ 0)."""
    return 1 + secrets.randbelow(Q - 1)


@dataclass(frozen=True)
class Ciphertext:
    a: int
    b: int

    def to_bytes(self) -> bytes:
        return int(self.a).to_bytes(ELEMENT_BYTES, "big") + int(self.b).to_bytes(ELEMENT_BYTES, "big")

    @classmethod
    def from_bytes(cls, data: bytes) -> Ciphertext:
        """Length and range only: the receiver checks subgroup membership for a whole message at once
        (`all_members`)."""
        if len(data) != CIPHERTEXT_BYTES:
            raise InvalidCiphertext(f"a comparison ciphertext is {CIPHERTEXT_BYTES} bytes, got {len(data)}")
        a, b = int.from_bytes(data[:ELEMENT_BYTES], "big"), int.from_bytes(data[ELEMENT_BYTES:], "big")
        if not (in_range(a) and in_range(b)):
            raise InvalidCiphertext("a comparison ciphertext's components lie in [1, p)")
        return cls(a, b)

    def times(self, other: Ciphertext) -> Ciphertext:
        """Enc(m + m′)."""
        return Ciphertext(self.a * other.a % P, self.b * other.b % P)

    def inverse(self) -> Ciphertext:
        """Enc(−m)."""
        return Ciphertext(int(gmpy2.invert(self.a, P)), int(gmpy2.invert(self.b, P)))

    def plus_constant(self, constant: int) -> Ciphertext:
        """Enc(m + constant), for a small public constant."""
        return Ciphertext(self.a, self.b * _g_to(constant % Q) % P)

    def cubed(self) -> Ciphertext:
        """Enc(3·m)."""
        return Ciphertext(pow(self.a, 3, P), pow(self.b, 3, P))


def all_members(ciphertexts: list[Ciphertext]) -> bool:
    """Every component lies in the subgroup of order q (checked on every core)."""
    return members([value for c in ciphertexts for value in (c.a, c.b)])


@dataclass(frozen=True)
class ElGamalPublicKey:
    h: int

    def __post_init__(self):
        if not in_range(self.h) or self.h == 1 or not members([self.h]):
            raise InvalidKey("a comparison key must be an element other than 1 of the comparison group")

    @cached_property
    def key_id(self) -> bytes:
        return fingerprint(KEY_ID_TAG, P, Q, G, self.h)

    def to_bytes(self) -> bytes:
        return int(self.h).to_bytes(ELEMENT_BYTES, "big")

    @classmethod
    def from_bytes(cls, data: bytes) -> ElGamalPublicKey:
        if len(data) != ELEMENT_BYTES:
            raise InvalidKey(f"a comparison key is {ELEMENT_BYTES} bytes, got {len(data)}")
        return cls(int.from_bytes(data, "big"))

    def zero(self) -> Ciphertext:
        """A fresh encryption of 0, (g^s, h^s): the re-randomiser of anything sent to the owner."""
        return self.encrypt_with_randomness(0)[0]

    def encrypt(self, message: int) -> Ciphertext:
        return self.encrypt_with_randomness(message)[0]

    def encrypt_with_randomness(self, message: int) -> tuple[Ciphertext, int]:
        """(g^s, g^m·h^s) and s, which a proof about the plaintext needs."""
        s = random_exponent()
        return Ciphertext(g_power(s), h_power(self, s)).plus_constant(message), s


def g_power(exponent: int) -> int:
    """g^exponent for 0 ≤ exponent < q, from g's fixed-base table."""
    return int(_table(G).pow(exponent))


def h_power(public: ElGamalPublicKey, exponent: int) -> int:
    """h^exponent for 0 ≤ exponent < q, from the owner's key's fixed-base table."""
    return int(_table(public.h).pow(exponent))


@dataclass(frozen=True)
class ElGamalKeyPair:
    x: int
    public: ElGamalPublicKey

    @classmethod
    def generate(cls) -> ElGamalKeyPair:
        x = random_multiplier()
        return cls(x, ElGamalPublicKey(pow(G, x, P)))

    def zero_flags(self, ciphertexts: list[Ciphertext]) -> list[bool]:
        """Whether each plaintext is zero, always testing all of them (a count of zeros must not show in the
        time), on every core."""
        return [c.b == value for c, value in zip(ciphertexts, powmod_all([c.a for c in ciphertexts], self.x, P))]
