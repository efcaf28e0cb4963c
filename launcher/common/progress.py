"""Progress of long runs, on standard error so reports on standard output stay clean: `progress(message)` is one
line; `steps(total, what)` counts steps with their ETA, as a bar (rich) on a terminal and as plain lines
otherwise (a log, CI, a pipe), at most one every `PLAIN_EVERY_S` seconds besides the first and the last."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator

PLAIN_EVERY_S = 10.0


def progress(message: str) -> None:
    print(f"  … {message}", file=sys.stderr, flush=True)


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value < 120 else f"{value / 60:.1f} min"


class Steps:
    """`advance(note)` after each step; the note (the point just done) is shown beside the count."""

    def __init__(self, total: int, what: str, show: Callable[[int, str], None]):
        self.total, self.what, self.done = total, what, 0
        self._show = show

    def advance(self, note: str = "", count: int = 1) -> None:
        self.done += count
        self._show(count, note)


class _PlainLines:
    def __init__(self, total: int, what: str):
        self.total, self.what = total, what
        self.started = time.monotonic()
        self.last = float("-inf")
        self.done = 0

    def __call__(self, count: int, note: str) -> None:
        self.done += count
        now = time.monotonic()
        if self.done < self.total and now - self.last < PLAIN_EVERY_S:
            return
        self.last = now
        elapsed = now - self.started
        left = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        eta = f", about {_seconds(left)} left" if self.done < self.total else ""
        progress(f"{self.what}: {self.done}/{self.total}{f' ({note})' if note else ''} after {_seconds(elapsed)}{eta}")


@contextlib.contextmanager
def steps(total: int, what: str) -> Iterator[Steps]:
    """Count `total` steps of `what`: a rich bar with elapsed time and ETA when standard error is a terminal."""
    if not sys.stderr.isatty():
        yield Steps(total, what, _PlainLines(total, what))
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    # What the run prints meanwhile (its own result lines) goes above the bar.
    with Progress(TextColumn("  {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=Console(stderr=True)) as bar:
        task = bar.add_task(what, total=total)

        def show(count: int, note: str) -> None:
            bar.update(task, advance=count, description=f"{what} ({note})" if note else what)

        yield Steps(total, what, show)
