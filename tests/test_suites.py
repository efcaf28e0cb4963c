"""The suites .ci/run runs (the README's quick one from pyproject's addopts, then the network, slow, hardening,
emulated networks' and Ray's ones) run every test exactly once, whatever combination of markers it carries."""

import itertools
import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKERS = ("network", "slow", "hardening", "netem", "ray")


def _selections() -> dict[str, str]:
    """Each suite's -m expression: the quick one from addopts, the others from .ci/run's `suite` lines."""
    addopts = shlex.split(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
                          ["addopts"])
    selections = {"quick": addopts[addopts.index("-m") + 1]}
    for line in (ROOT / ".ci" / "run").read_text().splitlines():
        words = shlex.split(line) if line.startswith("suite ") else []
        if words:
            selections[words[1]] = words[words.index("-m") + 1] if "-m" in words else selections["quick"]
    return selections


def _selects(expression: str, marked: set[str]) -> bool:
    if not re.fullmatch(r"[a-z_ ()]+", expression):
        raise ValueError(f"unexpected -m expression {expression!r}")
    return bool(eval(expression, {"__builtins__": {}}, {name: name in marked for name in MARKERS}))


def test_ci_runs_the_quick_suite_and_five_others():
    assert list(_selections()) == ["quick", "network", "slow", "hardening", "netem", "ray"]


def test_every_combination_of_markers_is_in_exactly_one_suite():
    selections = _selections()
    for count in range(len(MARKERS) + 1):
        for marked in itertools.combinations(MARKERS, count):
            if "ray" in marked and "slow" not in marked:  # a Ray cluster test is slow (tests/test_ray_cluster.py)
                continue
            chosen = [name for name, expression in selections.items() if _selects(expression, set(marked))]
            assert len(chosen) == 1, (marked, chosen)


def test_the_quick_suite_starts_no_role_process():
    assert not _selects(_selections()["quick"], {"network"})
