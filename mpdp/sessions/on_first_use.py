"""A role host's resource made when a protocol first needs it, once per process (a teacher model, Charlie's
key ζ, X_aux): start-up costs only for what runs, and the logical parties of a host share what is made."""

from __future__ import annotations

import threading
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class OnFirstUse(Generic[T]):
    """`get()` makes the value on its first call and returns the same value after; concurrent first callers
    (sessions open in worker threads) wait for the one that makes it. A failed make is retried next time."""

    def __init__(self, make: Callable[[], T]):
        self._make: Callable[[], T] | None = make
        self._value: T | None = None
        self._lock = threading.Lock()

    @property
    def made(self) -> bool:
        return self._make is None

    def get(self) -> T:
        if self._make is not None:
            with self._lock:
                if self._make is not None:
                    self._value = self._make()
                    self._make = None  # drops what the maker held (file paths, parts of data)
        return self._value  # type: ignore[return-value]
