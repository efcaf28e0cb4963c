"""Giving freed memory back to the system (glibc's allocator keeps it otherwise).

A role process receives messages of tens of megabytes; a refused one stays reachable through the cycle its
refusal's traceback makes until Python's collector runs, and after glibc frees it, its pages stay in the
process's arenas: a burst of large refused requests left a role holding gigabytes while idle. A collection
of reference cycles and a `malloc_trim(0)` shortly after each large request, and few arenas (set at
start-up), bound that. Elsewhere than glibc these do nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging

log = logging.getLogger(__name__)

RELEASE_AFTER_BYTES = 1024 * 1024
RELEASE_DELAY_S = 0.5  # one trim after a burst of large requests, once their buffers are freed
ARENAS = 2  # glibc's default is 8 per core, each keeping its own free pages
_M_ARENA_MAX = -8

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
    """At a role process's start, before its threads allocate: few arenas. False where the allocator is not
    glibc's."""
    libc = _glibc()
    if libc is None:
        return False
    if libc.mallopt(_M_ARENA_MAX, ARENAS) != 1:
        log.warning("mallopt(M_ARENA_MAX, %d) was refused", ARENAS)
        return False
    return True


def release() -> None:
    """Free what only reference cycles still hold (a refused request's traceback keeps its frame, and the
    frame its body), then return the allocator's free pages to the system."""
    gc.collect()
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
