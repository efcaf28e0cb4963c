"""Simultaneous multi-exponentiation: Π b_j^e_j mod N with one chain of squarings.

P separate powmods with k-bit exponents cost P·k squarings. Straus' method shares the k squarings and each base
adds about k/w multiplications from its own table of w-bit digits (2^w − 2 to build): a batch proof's random
linear combination (P ≈ 11 shares, 128-bit coefficients) costs about 40 % of the separate powmods. For many
bases (a sender's bit proofs: thousands of commitments with 64-bit coefficients) the table dominates, and
Pippenger's bucket method is cheaper: per c-bit window, one multiplication per base into the bucket of its digit
and 2·2^c to weigh the buckets, about (k/c)·(P + 2^(c+1)) in all and no table per base.

Two variants for a verifier's batch checks: `SharedBases` builds the tables once for bases raised to several
exponent vectors (every key holder's random linear combination of the same ciphertexts), and `sliding_multi_powmod`
keeps only odd digits (Straus with sliding windows: 2^(w−1) entries a base and about k/(w+1) multiplications), which
is cheaper for a few bases with exponents of thousands of bits (a folded proof's responses).
"""

from __future__ import annotations

from collections.abc import Sequence

import gmpy2

WINDOW_BITS = 4  # 15 multiplications per base for its table; 4 is fastest for 128-bit exponents
BUCKET_MIN_BASES = 64  # from here on the bucket method is cheaper for 64- to 200-bit exponents
SHARED_WINDOW_BITS = 5  # t ≈ 7 vectors over P ≈ 11 bases with 128-bit exponents: 330 table entries pay off
SLIDING_WINDOW_BITS = 7  # t ≈ 7 bases, ~5 000-bit exponents: 64 odd powers a base, a multiplication per ~8 bits


def multi_powmod(bases: Sequence[int], exponents: Sequence[int], modulus: int,
                 window_bits: int = WINDOW_BITS) -> gmpy2.mpz:
    """Π bases[j]^exponents[j] mod modulus, for exponents ≥ 0."""
    exponents = _checked(len(bases), exponents, window_bits)
    modulus = gmpy2.mpz(modulus)
    if len(bases) >= BUCKET_MIN_BASES:
        return _buckets(bases, exponents, modulus)
    return _straus(_tables(bases, modulus, window_bits), exponents, modulus, window_bits)


def _checked(bases: int, exponents: Sequence[int], window_bits: int) -> list[int]:
    """The exponents as ints, once their count matches the bases' and none is negative."""
    if bases != len(exponents):
        raise ValueError(f"{bases} bases for {len(exponents)} exponents")
    if window_bits <= 0:
        raise ValueError("the window must be at least one bit")
    checked = [int(e) for e in exponents]
    if any(e < 0 for e in checked):
        raise ValueError("exponents must be non-negative")
    return checked


def _tables(bases: Sequence[int], modulus: gmpy2.mpz, window_bits: int) -> list[list[gmpy2.mpz]]:
    """Per base, its powers 0 .. 2^w − 1."""
    tables = []
    for base in bases:
        row = [gmpy2.mpz(1), gmpy2.mpz(base) % modulus]
        for _ in range((1 << window_bits) - 2):
            row.append(row[-1] * row[1] % modulus)
        tables.append(row)
    return tables


def _straus(tables: list[list[gmpy2.mpz]], exponents: list[int], modulus: gmpy2.mpz, window_bits: int) -> gmpy2.mpz:
    digits = (1 << window_bits) - 1
    top = max((e.bit_length() for e in exponents), default=0)
    result = gmpy2.mpz(1)
    for shift in range((top - 1) // window_bits * window_bits, -1, -window_bits):
        for _ in range(window_bits):
            result = result * result % modulus
        for row, exponent in zip(tables, exponents):
            digit = (exponent >> shift) & digits
            if digit:
                result = result * row[digit] % modulus
    return result % modulus


class SharedBases:
    """Fixed bases raised to several exponent vectors: the digit tables are built once for all of them."""

    def __init__(self, bases: Sequence[int], modulus: int, window_bits: int = SHARED_WINDOW_BITS):
        if window_bits <= 0:
            raise ValueError("the window must be at least one bit")
        self.count = len(bases)
        self.modulus = gmpy2.mpz(modulus)
        self.window_bits = window_bits
        self._tables = _tables(bases, self.modulus, window_bits)

    def power(self, exponents: Sequence[int]) -> gmpy2.mpz:
        """Π bases[j]^exponents[j] mod modulus, for exponents ≥ 0."""
        exponents = _checked(self.count, exponents, self.window_bits)
        return _straus(self._tables, exponents, self.modulus, self.window_bits)


def sliding_multi_powmod(bases: Sequence[int], exponents: Sequence[int], modulus: int,
                         window_bits: int = SLIDING_WINDOW_BITS) -> gmpy2.mpz:
    """Π bases[j]^exponents[j] mod modulus, for exponents ≥ 0, with sliding windows: each exponent is cut into
    odd digits of at most w bits separated by zeros, and each base keeps only its odd powers b, b³, …, b^(2^w − 1)."""
    exponents = _checked(len(bases), exponents, window_bits)
    modulus = gmpy2.mpz(modulus)
    top = max((e.bit_length() for e in exponents), default=0)
    # at[i]: the table entries to multiply in once the running result has been squared down to bit i
    at: list[list[gmpy2.mpz]] = [[] for _ in range(top)]
    for base, exponent in zip(bases, exponents):
        if not exponent:
            continue
        value = gmpy2.mpz(base) % modulus
        square = value * value % modulus
        odd = [value]  # odd[k] = base^(2k + 1)
        for _ in range((1 << (window_bits - 1)) - 1):
            odd.append(odd[-1] * square % modulus)
        bit = exponent.bit_length() - 1
        while bit >= 0:
            if not (exponent >> bit) & 1:
                bit -= 1
                continue
            low = max(bit - window_bits + 1, 0)
            digit = (exponent >> low) & ((1 << (bit - low + 1)) - 1)
            while not digit & 1:  # end the window on a set bit, so that the digit is odd
                digit >>= 1
                low += 1
            at[low].append(odd[digit >> 1])
            bit = low - 1
    result = gmpy2.mpz(1)
    for bit in range(top - 1, -1, -1):
        result = result * result % modulus
        for entry in at[bit]:
            result = result * entry % modulus
    return result % modulus


def _buckets(bases: Sequence[int], exponents: list[int], modulus: gmpy2.mpz) -> gmpy2.mpz:
    """Pippenger's bucket method with byte digits (c = 8): per window Σ_d d·B_d as running products."""
    top = max(e.bit_length() for e in exponents)
    if top == 0:
        return gmpy2.mpz(1) % modulus
    length = (top + 7) // 8
    digits = [e.to_bytes(length, "little") for e in exponents]
    values = [gmpy2.mpz(b) % modulus for b in bases]
    result = gmpy2.mpz(1)
    for window in range(length - 1, -1, -1):
        for _ in range(8):
            result = result * result % modulus
        buckets: list[gmpy2.mpz | None] = [None] * 256
        for value, row in zip(values, digits):
            digit = row[window]
            if digit:
                held = buckets[digit]
                buckets[digit] = value if held is None else held * value % modulus
        running: gmpy2.mpz | None = None
        weighed: gmpy2.mpz | None = None
        for digit in range(255, 0, -1):  # running = Π_{d' ≥ d} B_d'; their product is Π B_d^d
            held = buckets[digit]
            if held is not None:
                running = held if running is None else running * held % modulus
            if running is not None:
                weighed = running if weighed is None else weighed * running % modulus
        if weighed is not None:
            result = result * weighed % modulus
    return result % modulus
