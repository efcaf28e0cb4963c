"""One base raised to several long exponents (Yao's method): the squarings are done once, for all of them.

A Pathak party raises ζ(v_j) to each of its packed noise plaintexts (six 2048-bit exponents at d = 123). Separate
exponentiations square 2048 times each. Here the powers base^(2^(w·i)) are made once (2048 squarings in all),
and each exponent then costs one multiplication per w-bit window plus 2^(w+1) to combine its buckets: about 40 %
of the separate cost for six exponents.

Every window costs one multiplication whatever its digit (a zero digit goes to a bucket that is never used), so
the time does not count an exponent's zero digits: the exponents are a party's secret noise.
"""

from __future__ import annotations

import gmpy2

WINDOW_BITS = 5


def powmod_exponents(base: int, exponents: list[int], modulus: int, window_bits: int = WINDOW_BITS) -> list[int]:
    """[base^e mod modulus for e in exponents], each e ≥ 0."""
    if any(e < 0 for e in exponents):
        raise ValueError("exponents must be non-negative")
    if len(exponents) < 2:  # nothing to share
        return [int(gmpy2.powmod(base, e, modulus)) for e in exponents]
    modulus = gmpy2.mpz(modulus)
    width = max(e.bit_length() for e in exponents)
    windows = -(-width // window_bits)
    powers = [gmpy2.mpz(base) % modulus]  # base^(2^(w·i))
    for _ in range(windows - 1):
        value = powers[-1]
        for _ in range(window_bits):
            value = value * value % modulus
        powers.append(value)
    mask, results = (1 << window_bits) - 1, []
    for exponent in exponents:
        buckets = [gmpy2.mpz(1)] * (mask + 1)  # buckets[d] = product of the powers whose digit is d
        for power in powers:
            digit = exponent & mask
            buckets[digit] = buckets[digit] * power % modulus
            exponent >>= window_bits
        # Π_d buckets[d]^d as running products: 2·(2^w − 1) multiplications.
        running, total = gmpy2.mpz(1), gmpy2.mpz(1)
        for digit in range(mask, 0, -1):
            running = running * buckets[digit] % modulus
            total = total * running % modulus
        results.append(int(total))
    return results
