"""Additive sharing in Z_{2^R} (pathak.md Stage 3 step 3)."""

from __future__ import annotations

import secrets

from mpdp.protocols.pathak.parameters import RING_BITS
from mpdp.sessions.errors import invalid

MODULUS = 1 << RING_BITS
VALUE_BYTES = RING_BITS // 8


def encode(values: list[int]) -> list[int]:
    return [v % MODULUS for v in values]


def decode_signed(values: list[int]) -> list[int]:
    return [v - MODULUS if v >= MODULUS // 2 else v for v in values]


def split(values: list[int], shares: int) -> list[list[int]]:
    """`shares` uniform vectors that sum to `values` mod 2^R."""
    randoms = [[secrets.randbelow(MODULUS) for _ in values] for _ in range(shares - 1)]
    last = [(v - sum(column)) % MODULUS for v, column in zip(encode(values), zip(*randoms))] if randoms else encode(values)
    return randoms + [last]


def add(vectors: list[list[int]]) -> list[int]:
    return [sum(column) % MODULUS for column in zip(*vectors)]


def to_bytes(values: list[int]) -> list[bytes]:
    return [v.to_bytes(VALUE_BYTES, "big") for v in values]


def from_bytes(values, dimension: int) -> list[int]:
    if len(values) != dimension or any(len(v) != VALUE_BYTES for v in values):
        raise invalid(f"a share is {dimension} values of {VALUE_BYTES} bytes")
    return [int.from_bytes(v, "big") for v in values]
