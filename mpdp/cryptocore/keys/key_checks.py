"""Key ids and the checks every public key passes before use (crypto.md, "Wire form").

A key id is SHA-256 over *every* public parameter (n, h_s; for threshold keys also
t, ℓ, v, v_1..v_ℓ), so two keys that differ in any parameter have different ids.
A public key from a file or from the wire is refused unless its modulus is an odd
number of an allowed size with no prime factor below 2^16, and every group element is
a unit of Z*_{n²} other than ±1 and other than the order-2 elements that would split n.

Why no small factor: a value holder multiplies a plaintext c by a uniform unit r and
the key owner decrypts r·c mod n, which reveals gcd(c, n). With only large factors
that is 1 for every small non-zero c (a comparison's c_i, |c_i| ≤ 3ℓ); an owner whose
n = 3·5·7·…·P would read whether each c_i is divisible by each small prime, and from
the shuffled multiset much of the leader's input (tests/test_comparison.py).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import gmpy2

from mpdp.cryptocore.errors import InvalidKey, KeyMismatch
from mpdp.cryptocore.keys.key_sizes import MIN_KEY_BITS

MAX_KEY_BITS = 8192
SMALL_FACTOR_BOUND = 2**16  # every prime factor of a modulus exceeds it (a comparison needs > 3ℓ + 2)


@lru_cache(maxsize=1)
def _small_primes_product() -> int:
    return int(gmpy2.primorial(SMALL_FACTOR_BOUND))


def length_prefixed_digest(items) -> bytes:
    """SHA-256 over byte strings, each preceded by its length (4 bytes, big-endian): no two lists collide."""
    digest = hashlib.sha256()
    for item in items:
        digest.update(len(item).to_bytes(4, "big"))
        digest.update(item)
    return digest.digest()


def fingerprint(tag: bytes, *values: int) -> bytes:
    """SHA-256 over the tag and the values, each length-prefixed big-endian."""
    return length_prefixed_digest((tag, *(int(v).to_bytes((int(v).bit_length() + 7) // 8 or 1, "big") for v in values)))


def check_key_id(expected: bytes, claimed: bytes) -> None:
    if bytes(claimed) != expected:
        raise KeyMismatch("message is encrypted under another key (key id mismatch)")


def check_modulus(n: int, bits: int | None = None) -> None:
    """n odd, of an even number of bits in [MIN_KEY_BITS, MAX_KEY_BITS], and of `bits` bits if given."""
    size = int(n).bit_length()
    if bits is not None and size != bits:
        raise InvalidKey(f"a Paillier modulus of {bits} bits is required, got {size}")
    if not MIN_KEY_BITS <= size <= MAX_KEY_BITS or size % 2 or n % 2 == 0:
        raise InvalidKey(f"a Paillier modulus must be odd with an even number of bits in [{MIN_KEY_BITS}, {MAX_KEY_BITS}]")
    if gmpy2.gcd(n, _small_primes_product()) != 1:
        raise InvalidKey(f"a Paillier modulus has no prime factor below {SMALL_FACTOR_BOUND}")
    if gmpy2.is_square(n) or gmpy2.is_prime(n):
        raise InvalidKey("a Paillier modulus is a product of two distinct primes")


def check_group_element(n: int, value: int, name: str, generator: bool = True) -> int:
    """value ∈ Z*_{n²} and not ±1; a `generator` (v, h_s) must also be ≢ ±1 modulo each prime factor,
    which rules out the other elements of order 2 (a verification key v_i = v^{Δ·s_i} may be ≡ 1 mod n)."""
    nsquare = n * n
    if not 1 < value < nsquare - 1:
        raise InvalidKey(f"{name} must lie in (1, n² − 1)")
    if gmpy2.gcd(value, n) != 1:
        raise InvalidKey(f"{name} is not a unit of Z*_(n²)")
    if generator and (gmpy2.gcd(value - 1, n) != 1 or gmpy2.gcd(value + 1, n) != 1):
        raise InvalidKey(f"{name} is ±1 modulo a factor of n: not a valid generator for this key")
    return value
