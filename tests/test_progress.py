"""Progress of long runs: plain lines with the count and an ETA when standard error is not a terminal (a log,
CI), a rich bar when it is."""

import io
import itertools
import sys

from launcher.common import progress


def test_plain_lines_give_the_count_and_an_eta_at_most_every_few_seconds(monkeypatch, capsys):
    clock = itertools.count(0.0, 4.0)  # every call 4 s later: the first step, then one line in every 10 s, the last
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    with progress.steps(5, "ε sweep") as done:
        for epsilon in (0.1, 0.2, 0.4, 0.8, 1.6):
            done.advance(f"ε = {epsilon:g}")
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["  … ε sweep: 1/5 (ε = 0.1) after 4 s, about 16 s left",
                     "  … ε sweep: 4/5 (ε = 0.8) after 16 s, about 4 s left",
                     "  … ε sweep: 5/5 (ε = 1.6) after 20 s"]
    assert done.done == 5


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar(monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress.steps(3, "local classifiers") as done:
        for _ in range(3):
            done.advance()
    shown = terminal.getvalue()
    assert "local classifiers" in shown and "3/3" in shown and "\x1b[" in shown  # drawn with terminal codes
