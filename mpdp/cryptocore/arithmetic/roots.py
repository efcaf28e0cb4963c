"""Roots modulo n = p·q, taken by the owner of the factors: CRT recombination, n-th roots of units (which exist
for every unit when gcd(n, φ(n)) = 1) and fourth roots modulo a prime ≡ 3 (mod 4)."""

from __future__ import annotations

import gmpy2


def crt(residue_p: int, residue_q: int, p: int, q: int) -> int:
    """The x mod p·q with x ≡ residue_p (mod p) and x ≡ residue_q (mod q)."""
    return int((residue_q + q * ((residue_p - residue_q) * gmpy2.invert(q, p) % p)) % (p * q))


def nth_root(value: int, p: int, q: int) -> int:
    """ρ mod n with ρ^n ≡ value (mod n), n = p·q."""
    n = p * q
    return crt(int(gmpy2.powmod(value % p, gmpy2.invert(n, p - 1), p)),
               int(gmpy2.powmod(value % q, gmpy2.invert(n, q - 1), q)), p, q)


def fourth_root(value: int, prime: int) -> int:
    """The fourth root of a quadratic residue mod a prime ≡ 3 (mod 4) that is itself a residue."""
    return int(gmpy2.powmod(value, pow((prime + 1) // 4, 2, prime - 1), prime))
