"""Accountant evaluations in a child process, so a role at rest never holds dp-accounting.

dp-accounting imports scipy.stats (about 50 MB), and its privacy-loss distributions leave tens of MB of arrays
behind. A role process (`mpdp serve`) calls `isolate()` at start-up; from then on every function decorated with
`@in_accountant` runs in one spawned child, which lives while calls keep coming and exits after `IDLE_S`
seconds without one, returning its memory. Anywhere else (tests, the in-process references, the CLI) the
functions run in the caller, as before. Arguments and results are small public values (parameters, ε, δ, N).
"""

from __future__ import annotations

import functools
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from mpdp.platform.lifetime import die_with_parent
from mpdp.platform.unavailable import HelperUnavailable

IDLE_S = 60.0  # sessions a minute apart share one child; a role at rest returns its memory after this

_isolated = False
_lock = threading.Lock()
_child: ProcessPoolExecutor | None = None
_idle_timer: threading.Timer | None = None
_busy = 0


class AccountantUnavailable(HelperUnavailable):
    """The child died twice in one call (killed, out of memory): the request fails, retryably."""


def isolate() -> None:
    """From now on, decorated functions run in the accountant child (call once, at a role's start-up)."""
    global _isolated
    _isolated = True


def _exit_with(parent: int) -> None:
    """In the child: exit when the role does, even if it was killed and could not stop the child. On Linux the
    kernel kills it (PR_SET_PDEATHSIG), even mid-computation, when the GIL keeps a watching thread waiting."""
    die_with_parent(signal.SIGKILL, parent)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def _acquire() -> ProcessPoolExecutor:
    global _child, _busy
    with _lock:
        if _idle_timer is not None:
            _idle_timer.cancel()
        if _child is None:
            import multiprocessing

            # Spawned, not forked: the role already runs gRPC threads.
            _child = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_exit_with, initargs=(os.getpid(),))
        _busy += 1
        return _child


def _release(child: ProcessPoolExecutor, broken: bool) -> None:
    global _child, _busy, _idle_timer
    with _lock:
        _busy -= 1
        if broken and _child is child:
            _child = None  # the next call starts a fresh child
            child.shutdown(wait=False, cancel_futures=True)
        elif _busy == 0 and _child is not None:
            _idle_timer = threading.Timer(IDLE_S, _shut_down_if_idle)
            _idle_timer.daemon = True
            _idle_timer.start()


def _shut_down_if_idle() -> None:
    global _child
    with _lock:
        if _busy or _child is None:
            return
        child, _child = _child, None
    child.shutdown(wait=True)


def shut_down() -> None:
    """Stop the child now (tests). A role that exits stops it through concurrent.futures' exit handler."""
    if _idle_timer is not None:
        _idle_timer.cancel()
    _shut_down_if_idle()


def child_running() -> bool:
    return _child is not None


def _run_by_name(module: str, name: str, args: tuple):
    import importlib

    return getattr(importlib.import_module(module), name)(*args)


def in_accountant(function):
    """Run `function` in the accountant child when this process is isolated. Its arguments and result must pickle,
    and it must be a module-level name (the child finds it by name, whatever decorates it further)."""

    @functools.wraps(function)
    def call(*args):
        if not _isolated:
            return function(*args)
        for attempt in range(2):  # a child that died while idle is replaced once, transparently
            child = _acquire()
            broken = False
            try:
                return child.submit(_run_by_name, function.__module__, function.__name__, args).result()
            except BrokenProcessPool:
                broken = True
            finally:
                _release(child, broken)
        raise AccountantUnavailable("the privacy accountant's process died; the next request starts a new one")

    return call
