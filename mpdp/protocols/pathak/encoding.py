"""Pathak's integer encodings, and who leads."""

from __future__ import annotations

from mpdp.sessions.errors import invalid

LEADER = 1  # P_1, the lowest party id
MAX_INTEGER_BYTES = 4096



def signed_bytes(value: int) -> bytes:
    """Two's-complement big-endian, minimal length."""
    return int(value).to_bytes((int(value).bit_length() + 8) // 8, "big", signed=True)


def int_from_signed_bytes(data: bytes) -> int:
    if not 0 < len(data) <= MAX_INTEGER_BYTES:
        raise invalid("integer field has a wrong length")
    return int.from_bytes(data, "big", signed=True)
