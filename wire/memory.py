"""Giving freed memory back to the system (glibc's allocator keeps it otherwise).

A role process receives messages of tens of megabytes; after glibc frees them, their pages stay in the
process's arenas, so a burst of large (refused) requests left a role holding gigabytes while idle. Two
settings at start-up (few arenas; a fixed mmap threshold, so large buffers are unmapped when freed) and a
`malloc_trim(0)` shortly after each large request bound that. Elsewhere than glibc these do nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

RELEASE_AFTER_BYTES = 1024 * 1024
RELEASE_DELAY_S = 0.5  # one trim after a burst of large requests, once their buffers are freed
ARENAS = 2
MMAP_THRESHOLD_BYTES = 1024 * 1024
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8

_libc = None
_pending = False


def _glibc():
    global _libc
    if _libc is None:
        name = ctypes.util.find_library("c")
        try:
            library = ctypes.CDLL(name) if name else None
        except OSError:
            library = None
        _libc = library if library is not None and hasattr(library, "malloc_trim") else False
    return _libc or None


def configure() -> bool:
    """At a role process's start, before its threads allocate: few arenas, large buffers unmapped when freed.
    False where the allocator is not glibc's."""
    libc = _glibc()
    if libc is None:
        return False
    for option, value in ((_M_ARENA_MAX, ARENAS), (_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES),
                          (_M_TRIM_THRESHOLD, MMAP_THRESHOLD_BYTES)):
        if libc.mallopt(option, value) != 1:
            log.warning("mallopt(%d, %d) was refused", option, value)
    return True


def release() -> None:
    """Return the allocator's free pages to the system."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


def release_soon(loop: asyncio.AbstractEventLoop) -> None:
    """One `release` RELEASE_DELAY_S from now, off the event loop (a burst schedules one)."""
    global _pending
    if _pending:
        return
    _pending = True

    def run() -> None:
        global _pending
        _pending = False
        loop.run_in_executor(None, release)

    loop.call_later(RELEASE_DELAY_S, run)
