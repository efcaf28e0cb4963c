"""Waiting in tests for an event, not for a time: poll a condition until it holds, with an overall limit
generous enough for a loaded 2-core machine (reaching it means the event never came)."""

from __future__ import annotations

import time
from typing import Callable

PATIENCE_S = 300.0


def eventually(condition: Callable[[], object], patience: float = PATIENCE_S, interval: float = 0.1) -> bool:
    """True as soon as `condition()` is true; False if it is still false after `patience` seconds."""
    limit = time.monotonic() + patience
    while not condition():
        if time.monotonic() > limit:
            return False
        time.sleep(interval)
    return True
