"""Prime generation for Paillier moduli: Blum primes and safe primes.

Safe primes p = 2p' + 1 are found by sieving a window of candidates for p'
with small primes, removing every p' where p' or 2p' + 1 has a small factor,
and running the expensive tests only on the survivors. A random 1023-bit odd
number is a Sophie Germain prime with probability about 1/95 000; the sieve
leaves about 1.3 % of candidates, so a 2048-bit modulus costs about two
thousand Fermat tests instead of two hundred thousand.
"""

from __future__ import annotations

import secrets

import gmpy2
import numpy as np

_SIEVE_LIMIT = 1 << 16
_WINDOW = 1 << 16  # candidates per sieve window (odd p' = start + 2*offset)
_MILLER_RABIN_ROUNDS = 40


def _small_odd_primes(limit: int) -> np.ndarray:
    is_prime = np.ones(limit, dtype=bool)
    is_prime[:2] = False
    for k in range(2, int(limit**0.5) + 1):
        if is_prime[k]:
            is_prime[k * k :: k] = False
    primes = np.nonzero(is_prime)[0]
    return primes[primes > 2]


_SMALL_PRIMES = _small_odd_primes(_SIEVE_LIMIT)


def _random_odd_with_top_bits(bits: int) -> int:
    """Odd number of exactly `bits` bits with the two top bits set, so that
    the product of two such numbers has exactly 2*bits bits."""
    return secrets.randbits(bits) | (0b11 << (bits - 2)) | 1


def _sieve(start: int, forbidden_residues) -> np.ndarray:
    """Offsets k in [0, _WINDOW) such that start + 2k avoids every forbidden
    residue modulo every small prime."""
    alive = np.ones(_WINDOW, dtype=bool)
    for prime in _SMALL_PRIMES.tolist():
        start_mod = start % prime
        inverse_two = (prime + 1) // 2  # 2^-1 mod prime
        for residue in forbidden_residues(prime):
            # start + 2k ≡ residue (mod prime)  ⇔  k ≡ (residue - start)/2
            first = ((residue - start_mod) * inverse_two) % prime
            alive[first::prime] = False
    return np.nonzero(alive)[0]


def _is_probable_prime(candidate: int) -> bool:
    return gmpy2.is_prime(candidate, _MILLER_RABIN_ROUNDS)


def safe_prime(bits: int) -> int:
    """A random safe prime p = 2p' + 1 of exactly `bits` bits (p ≡ 3 mod 4)."""
    if bits < 16:
        raise ValueError("safe primes below 16 bits are not supported")
    two = gmpy2.mpz(2)
    while True:
        start = _random_odd_with_top_bits(bits - 1)
        if (start + 2 * _WINDOW).bit_length() != bits - 1:
            continue
        # p' ≢ 0 and 2p' + 1 ≢ 0, i.e. p' ≢ (prime - 1)/2, modulo each small prime.
        offsets = _sieve(start, lambda prime: (0, (prime - 1) // 2))
        for offset in offsets.tolist():
            half = gmpy2.mpz(start + 2 * offset)
            candidate = 2 * half + 1
            # Cheap base-2 Fermat tests on both numbers before the full tests.
            if gmpy2.powmod(two, half - 1, half) != 1:
                continue
            if gmpy2.powmod(two, candidate - 1, candidate) != 1:
                continue
            if _is_probable_prime(half) and _is_probable_prime(candidate):
                return int(candidate)


def blum_prime(bits: int) -> int:
    """A random prime p ≡ 3 (mod 4) of exactly `bits` bits."""
    if bits < 16:
        raise ValueError("primes below 16 bits are not supported")
    while True:
        candidate = _random_odd_with_top_bits(bits) | 0b11
        offsets = _sieve(candidate, lambda prime: (0,))
        for offset in offsets.tolist():
            value = candidate + 2 * offset
            if value % 4 == 3 and value.bit_length() == bits and _is_probable_prime(value):
                return int(value)


def distinct_prime_pair(bits: int, generator) -> tuple[int, int]:
    """Two distinct primes of `bits` bits each from `generator`."""
    first = generator(bits)
    while True:
        second = generator(bits)
        if second != first:
            return first, second
