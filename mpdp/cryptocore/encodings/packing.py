"""Packing signed small integers into slots of one Paillier plaintext (crypto.md, "Packing").

Slot j holds bits [j·B, (j+1)·B). A value v with |v| < 2^(b−1) is stored as
v + 2^(b−1), so every slot is non-negative and sums never borrow. With m
summands the slot is b + ⌈log₂ m⌉ bits wide; where the slot is masked before
decryption it gets σ + 1 more bits for a mask uniform in [0, 2^(B−1+σ)).
The packed plaintext stays below n/2, and the widths are checked up front so
that no slot can ever carry into the next.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from mpdp.cryptocore.errors import EncodingOverflow


@dataclass(frozen=True)
class SlotLayout:
    value_bits: int  # b: every value satisfies |v| < 2^(b−1)
    summands: int  # m: how many packed plaintexts may be added together
    plaintext_bits: int  # packed plaintexts stay below 2^plaintext_bits ≤ n/2
    mask_bits: int | None = None  # σ when slots are masked before decryption

    def __post_init__(self):
        if self.value_bits < 1 or self.summands < 1:
            raise ValueError("value width and number of summands must be positive")
        if self.slots_per_plaintext < 1:
            raise EncodingOverflow(
                f"a slot of {self.slot_bits} bits does not fit a {self.plaintext_bits}-bit plaintext"
            )

    @classmethod
    def for_modulus(cls, n: int, value_bits: int, summands: int, mask_bits: int | None = None) -> "SlotLayout":
        # 2^(bits(n) − 2) ≤ n/2, so a plaintext below it is never read as negative.
        return cls(value_bits, summands, n.bit_length() - 2, mask_bits)

    @property
    def sum_bits(self) -> int:
        """Width that holds the sum of m biased values."""
        return self.value_bits + (self.summands - 1).bit_length()

    @property
    def slot_bits(self) -> int:
        masked_extra = 0 if self.mask_bits is None else self.mask_bits + 1
        return self.sum_bits + masked_extra

    @property
    def slots_per_plaintext(self) -> int:
        return self.plaintext_bits // self.slot_bits

    @property
    def bias(self) -> int:
        return 1 << (self.value_bits - 1)

    @property
    def mask_bound(self) -> int:
        if self.mask_bits is None:
            raise ValueError("this layout has no mask")
        return 1 << (self.sum_bits - 1 + self.mask_bits)

    def plaintexts_needed(self, count: int) -> int:
        return -(-count // self.slots_per_plaintext)

    def _chunks(self, values: list[int]):
        step = self.slots_per_plaintext
        for start in range(0, len(values), step):
            yield values[start : start + step]

    def _combine(self, slot_values) -> int:
        packed = 0
        for position, slot_value in enumerate(slot_values):
            packed |= slot_value << (position * self.slot_bits)
        return packed

    def pack(self, values: list[int]) -> list[int]:
        """Biased values, slots_per_plaintext to a plaintext."""
        limit = self.bias
        for value in values:
            if not -limit < value < limit:
                raise EncodingOverflow(f"value {value} does not fit {self.value_bits} signed bits")
        return [self._combine(value + limit for value in chunk) for chunk in self._chunks(list(values))]

    def pack_masks(self, masks: list[int]) -> list[int]:
        """Masks, unbiased, in the same slot positions as `pack`."""
        bound = self.mask_bound
        for mask in masks:
            if not 0 <= mask < bound:
                raise EncodingOverflow("mask outside [0, 2^(B−1+σ))")
        return [self._combine(chunk) for chunk in self._chunks(list(masks))]

    def random_masks(self, count: int) -> list[int]:
        return [secrets.randbelow(self.mask_bound) for _ in range(count)]

    def unpack(self, plaintexts: list[int], count: int, biased_summands: int | None = None) -> list[int]:
        """Slot contents minus one bias per summand that carried one (default: m)."""
        biased_summands = self.summands if biased_summands is None else biased_summands
        if not 0 < biased_summands <= self.summands:
            raise ValueError("number of biased summands outside the layout")
        if len(plaintexts) != self.plaintexts_needed(count):
            raise EncodingOverflow(f"{len(plaintexts)} plaintexts cannot hold exactly {count} values")
        width, per_plaintext = self.slot_bits, self.slots_per_plaintext  # properties: read once, not per slot
        slot_mask = (1 << width) - 1
        offset = biased_summands * self.bias
        values: list[int] = []
        for plaintext in plaintexts:
            if not 0 <= plaintext < 1 << self.plaintext_bits:
                raise EncodingOverflow("packed plaintext outside the layout (negative or too large)")
            for position in range(min(per_plaintext, count - len(values))):
                values.append(((plaintext >> (position * width)) & slot_mask) - offset)
        return values
