"""Fixed-point encoding of reals for Paillier plaintexts (crypto.md, "Fixed-point encoding").

x ↦ round(x · 2^F); negative values become n − |v|. Each use states a bound on
|x|; a value beyond it is an error, never a silent wrap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mpdp.cryptocore.errors import EncodingOverflow

DEFAULT_FRACTIONAL_BITS = 32


@dataclass(frozen=True)
class FixedPoint:
    bound: float  # the largest |x| this use encodes
    fractional_bits: int = DEFAULT_FRACTIONAL_BITS

    def __post_init__(self):
        if not (self.bound > 0 and math.isfinite(self.bound * self.scale)):
            raise ValueError("the bound must be positive and finite once scaled by 2^F")

    @property
    def scale(self) -> int:
        return 1 << self.fractional_bits

    @property
    def max_encoded(self) -> int:
        """Largest |round(x · 2^F)| for |x| ≤ bound."""
        return math.floor(self.bound * self.scale + 0.5)

    @property
    def value_bits(self) -> int:
        """Signed width b with |encode(x)| < 2^(b−1), for packing."""
        return self.max_encoded.bit_length() + 1

    def encode(self, x: float) -> int:
        if not math.isfinite(x) or abs(x) > self.bound:
            raise EncodingOverflow(f"{x} outside the encoding range ±{self.bound}")
        return round(x * self.scale)

    def decode(self, encoded: int, summands: int = 1) -> float:
        """The real an integer sum of `summands` encodings stands for."""
        if abs(encoded) > summands * self.max_encoded:
            raise EncodingOverflow(f"{encoded} exceeds the range of a sum of {summands} encodings")
        return encoded / self.scale

    def encode_residue(self, x: float, n: int) -> int:
        return self.encode(x) % n

    def decode_residue(self, residue: int, n: int, summands: int = 1) -> float:
        signed = residue - n if residue > n // 2 else residue
        return self.decode(signed, summands)

    def check_headroom(self, n: int, summands: int, mask_bound: int = 0) -> None:
        """Sums of `summands` encodings plus masks must stay below n/2 (checked at session start)."""
        if summands * self.max_encoded + mask_bound >= n // 2:
            raise EncodingOverflow(
                f"{summands} values of magnitude ≤ {self.bound} at 2^-{self.fractional_bits}"
                " precision plus masks do not fit below n/2"
            )
