"""Public real matrices (query points, auxiliary data) as common.proto carries them."""

from __future__ import annotations

import hashlib
import threading
import weakref

import numpy as np

from mpdp.proto.v1 import common_pb2
from mpdp.sessions.errors import invalid

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


_shared: weakref.WeakValueDictionary[bytes, np.ndarray] = weakref.WeakValueDictionary()
_shared_lock = threading.Lock()


def shared_matrix_from_proto(message: common_pb2.Matrix) -> np.ndarray:
    """`matrix_from_proto`, read-only and decoded once per process while any holder keeps it: the logical
    parties of one host each receive the same X_aux (or DPPP's queries) and share one array of it."""
    if message.rows * message.columns != len(message.values) or len(message.values) > MAX_MATRIX_VALUES:
        raise invalid(f"matrix of {message.rows}×{message.columns} has {len(message.values)} values")
    key = hashlib.blake2b(message.SerializeToString(deterministic=True), digest_size=32).digest()
    with _shared_lock:
        array = _shared.get(key)
    if array is None:
        array = matrix_from_proto(message)
        array.flags.writeable = False  # shared between parties: nobody changes it for another
        with _shared_lock:
            array = _shared.setdefault(key, array)
    return array
