"""Non-negative integers as protocol messages carry them: minimal big-endian bytes."""

from __future__ import annotations


def int_to_bytes(value: int) -> bytes:
    value = int(value)
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")
