"""Fixed-base windowed exponentiation (Brickell et al. / Lim–Lee style).

For a base g and modulus N used many times with exponents of at most
`exponent_bits` bits, precompute g^(j · 2^(w·i)) for every window i and digit
j. An exponentiation then costs one modular multiplication per window instead
of a square-and-multiply per bit.
"""

from __future__ import annotations

import gmpy2


class FixedBaseTable:
    def __init__(self, base: int, modulus: int, exponent_bits: int, window_bits: int = 8):
        if exponent_bits <= 0 or window_bits <= 0:
            raise ValueError("exponent and window sizes must be positive")
        self.modulus = gmpy2.mpz(modulus)
        self.exponent_bits = exponent_bits
        self.window_bits = window_bits
        self._digit_mask = (1 << window_bits) - 1
        windows = -(-exponent_bits // window_bits)
        self._rows = []
        window_base = gmpy2.mpz(base) % self.modulus
        for _ in range(windows):
            row = [gmpy2.mpz(1)]
            for _ in range(self._digit_mask):
                row.append(row[-1] * window_base % self.modulus)
            self._rows.append(row)
            # Next window's base: window_base^(2^w) = row[-1] * window_base.
            window_base = row[-1] * window_base % self.modulus

    def pow(self, exponent: int) -> gmpy2.mpz:
        if exponent < 0 or exponent.bit_length() > self.exponent_bits:
            raise ValueError("exponent outside the range the table was built for")
        result = gmpy2.mpz(1)
        modulus, mask, width = self.modulus, self._digit_mask, self.window_bits
        for row in self._rows:
            digit = exponent & mask
            if digit:
                result = result * row[digit] % modulus
            exponent >>= width
            if not exponent:
                break
        return result
