"""A second process for one long computation a verifier would otherwise wait for in turn.

The releasing role's check of every key holder's proof at once has one part that is long and needs nothing else
of the check: the holders' combinations C_i of the ciphertexts and the folded equation's multi-exponentiation with
~5 000-bit exponents over them (`threshold_batch`). In pure Python it holds the GIL, so a thread would not run it
beside the rest; a worker process does, on the machine's other core, while this process computes the holders'
other combinations, the short sides and the combination. Nothing secret crosses: the worker gets public group
elements and exponents (responses times the verifier's weights, which the holders never see) and returns C_i⁴ and
one product, which the caller uses as if it had computed them.

The worker runs in its own session, as every role process does (`processes.up`): where the kernel groups
scheduling by session (autogroup), a worker in the caller's session would share the caller's one group and gain
nothing on a busy machine. Off unless `start()` is called (the DPPP client calls it as it opens a session, so that
the worker's start-up is not in the check's time); `run` computes in this process when there is no worker or it
fails."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

_worker: tuple[Any, Connection] | None = None  # (the process, this side of its pipe)
_lock = threading.Lock()
_worker_cpu_s = 0.0  # the CPU seconds the worker spent on this process's requests, collected so far


def _serve(connection: Connection) -> None:
    """The worker: compute each (function, arguments) received and send back ("ok", result, CPU seconds) or
    ("error", text, CPU seconds)."""
    try:
        os.setsid()  # its own session: scheduled as a role process is (module docstring)
    except OSError:
        pass  # already a session leader: nothing to change
    while True:
        try:
            function, args = connection.recv()
        except (EOFError, OSError):  # the parent closed its side or died: nothing left to do
            return
        started = time.process_time()
        try:
            result = function(*args)
        except Exception as error:  # noqa: BLE001 - reported to the parent, which computes it itself
            connection.send(("error", repr(error), time.process_time() - started))
        else:
            connection.send(("ok", result, time.process_time() - started))


def start() -> None:
    """Start the worker process, once per process (`spawn`: no gRPC thread is forked). A pipe, not a pool:
    requests and answers move on the caller's own thread, with no helper thread waiting for the GIL that the
    caller's computation holds meanwhile."""
    global _worker
    with _lock:
        if _worker is None:
            context = multiprocessing.get_context("spawn")
            mine, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(theirs,), daemon=True, name="mpdp-offload")
            process.start()
            theirs.close()
            _worker = (process, mine)


def stop() -> None:
    global _worker
    with _lock:
        worker, _worker = _worker, None
    if worker is not None:
        process, connection = worker
        connection.close()
        process.join(timeout=5)
        if process.is_alive():
            process.terminate()


class Pending:
    """A computation sent to the worker; `run` collects it, `cancel` drops it."""

    def __init__(self, connection: Connection):
        self.connection = connection
        self.collected = False

    def collect(self) -> Any:
        global _worker_cpu_s
        self.collected = True
        status, value, cpu_s = self.connection.recv()
        _worker_cpu_s += cpu_s
        if status != "ok":
            raise RuntimeError(f"the worker failed: {value}")
        return value

    def cancel(self) -> None:
        """Read and drop the answer: the worker answers every request in turn, and the next must get its own."""
        if not self.collected:
            try:
                self.collect()
            except (OSError, EOFError, RuntimeError):
                _lost()


def submit(function: Callable[..., Any], *args: Any) -> Pending | None:
    """`function(*args)` started in the worker, or None without one (the caller then runs it itself). One
    computation at a time: `run` or `cancel` it before the next."""
    with _lock:
        if _worker is None:
            return None
        connection = _worker[1]
    try:
        connection.send((function, args))
    except (OSError, ValueError):  # the worker is gone: compute here from now on
        _lost()
        return None
    return Pending(connection)


def run(pending: Pending | None, function: Callable[..., Any], *args: Any) -> Any:
    """The result of `submit(function, *args)`, or `function(*args)` computed here if it was not submitted or the
    worker failed."""
    if pending is not None:
        try:
            return pending.collect()
        except (OSError, EOFError, RuntimeError):
            _lost()
    return function(*args)


def worker_cpu_seconds() -> float:
    """CPU seconds the worker has spent on this process's requests so far: a caller timing its own work adds the
    difference to its own thread's CPU time."""
    return _worker_cpu_s


def _lost() -> None:
    """A worker that failed is not used again (a half-read pipe would pair requests with wrong answers)."""
    global _worker
    with _lock:
        worker, _worker = _worker, None
    if worker is not None:
        worker[1].close()
        worker[0].terminate()
