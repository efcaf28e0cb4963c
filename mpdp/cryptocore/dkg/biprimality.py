"""Trial division of a revealed candidate n and the Boneh–Franklin biprimality test.

Boneh–Franklin, "Efficient generation of shared RSA keys" (J. ACM 48(4), 2001), §4: for
n = pq with p ≡ q ≡ 3 (mod 4) and g with Jacobi symbol (g/n) = 1, g^{φ(n)/4} ≡ ±1 (mod n).
Holder 1 publishes g^{(n − p_1 − q_1 + 1)/4}, holder i > 1 publishes g^{(p_i + q_i)/4}; the
test passes iff the first equals ± the product of the others. If n is not a product of two
distinct primes, at most half of the g pass, except when n = p^a·q^b, which the second part
(gcd(n, p + q − 1) = 1, computed as ζ = r·(p + q − 1) mod n, `holder`) rules out.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import gmpy2

REPETITIONS = 40  # error ≤ 2^−40 per accepted modulus
TRIAL_DIVISION_BOUND = 2**16  # every accepted n has no prime factor below it (key validation asks this)
BASE_TAG = b"mpdp/dkg/biprimality-base/v1"


@lru_cache(maxsize=1)
def _small_primes_product():
    return gmpy2.primorial(TRIAL_DIVISION_BOUND)


def passes_trial_division(n, bits: int) -> bool:
    """n has `bits` bits and no prime factor below TRIAL_DIVISION_BOUND."""
    return n.bit_length() == bits and gmpy2.gcd(n, _small_primes_product()) == 1


def test_base(n: int, label: bytes, repetition: int) -> int:
    """g ∈ Z*_n with (g/n) = 1 from a hash of n, the candidate's label and the repetition: fixed once n is,
    so no holder picks it."""
    counter = 0
    while True:
        seed = b"".join((BASE_TAG, int(n).to_bytes((int(n).bit_length() + 7) // 8, "big"), label,
                         repetition.to_bytes(4, "big"), counter.to_bytes(4, "big")))
        g = int.from_bytes(hashlib.shake_256(seed).digest((int(n).bit_length() + 64 + 7) // 8), "big") % n
        if g > 1 and gmpy2.jacobi(g, n) == 1:
            return g
        counter += 1


def exponent_share(n: int, p_share: int, q_share: int, index: int) -> int:
    """(n − p_1 − q_1 + 1)/4 for holder 1, (p_i + q_i)/4 for the others: they sum to φ(n)/4."""
    total = n - p_share - q_share + 1 if index == 1 else p_share + q_share
    quotient, remainder = divmod(total, 4)
    assert remainder == 0, "shares are ≡ 3 (holder 1) or 0 (mod 4) and n ≡ 1 (mod 4)"
    return quotient


def test_value(n: int, g: int, p_share: int, q_share: int, index: int) -> int:
    return int(gmpy2.powmod(g, exponent_share(n, p_share, q_share, index), n))


def passes(n: int, values: list[int]) -> bool:
    """values[i−1] is holder i's test value: v_1 ≡ ±Π_{i>1} v_i (mod n)."""
    product = gmpy2.mpz(1)
    for value in values[1:]:
        product = product * value % n
    return values[0] % n in (product, n - product)
