"""Conversions between protobuf messages and the values the protocol logic uses."""

from __future__ import annotations

import numpy as np

from cryptocore.threshold import PartialDecryption
from mpdp_proto.v1 import common_pb2, dppp_pb2
from sessions.errors import invalid

MAX_MATRIX_VALUES = 50_000_000


def matrix_to_proto(array: np.ndarray) -> common_pb2.Matrix:
    array = np.asarray(array, dtype=float)
    if array.ndim != 2:
        raise ValueError("a matrix has two dimensions")
    return common_pb2.Matrix(rows=array.shape[0], columns=array.shape[1], values=array.ravel().tolist())


def matrix_from_proto(message: common_pb2.Matrix) -> np.ndarray:
    if message.rows * message.columns != len(message.values) or len(message.values) > MAX_MATRIX_VALUES:
        raise invalid(f"matrix of {message.rows}×{message.columns} has {len(message.values)} values")
    array = np.asarray(message.values, dtype=float).reshape(message.rows, message.columns)
    if not np.all(np.isfinite(array)):
        raise invalid("matrix holds non-finite values")
    return array


def int_to_bytes(value: int) -> bytes:
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def partial_to_proto(partial: PartialDecryption) -> dppp_pb2.PartialDecryption:
    return dppp_pb2.PartialDecryption(
        value=int_to_bytes(partial.value),
        challenge=int_to_bytes(partial.challenge),
        response=int_to_bytes(partial.response),
    )


def partial_from_proto(holder: int, message: dppp_pb2.PartialDecryption, max_bytes: int) -> PartialDecryption:
    for name in ("value", "challenge", "response"):
        if not 0 < len(getattr(message, name)) <= max_bytes:
            raise invalid(f"partial decryption field {name} has a wrong length")
    return PartialDecryption(
        holder,
        int.from_bytes(message.value, "big"),
        int.from_bytes(message.challenge, "big"),
        int.from_bytes(message.response, "big"),
    )
