"""An interrupted test run leaves no process behind: pytest, stopped by SIGINT or SIGTERM while real role
processes serve, takes down the roles and every child they started (accountant children, multiprocessing's
resource trackers). Every process of the run is found by a tag in its environment, which children inherit."""

import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waiting import eventually

ROOT = Path(__file__).resolve().parent.parent
TAG = "MPDP_TEST_RUN_TAG"
ROLES = 4  # at least: the aggregator, the curator and two parties


def _tagged(tag: str) -> dict[int, str]:
    """Every live process (zombies excluded) whose environment holds TAG=tag: pid → command line."""
    marker = f"{TAG}={tag}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone, or another user's
            continue
        if state not in "ZX":
            found[int(entry.name)] = command
    return found


def _ready(processes: dict[int, str]) -> bool:
    servers = [c for c in processes.values() if "launcher.cli serve" in c]
    trackers = [c for c in processes.values() if "resource_tracker" in c]
    return len(servers) >= ROLES and len(trackers) >= 1


@pytest.mark.parametrize("target", ["test_a_shared_deployment", "test_the_demo_command"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_an_interrupted_run_leaves_no_process(tmp_path, target, signum):
    tag = secrets.token_hex(8)
    env = {**os.environ, TAG: tag}
    with (tmp_path / "pytest.log").open("w") as log:
        run = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "",
                                f"tests/interrupted_run.py::{target}"], cwd=ROOT, env=env, stdout=log,
                               stderr=subprocess.STDOUT)
    try:
        assert eventually(lambda: run.poll() is not None or _ready(_tagged(tag)), patience=900), \
            "the roles never served"
        assert run.poll() is None, (tmp_path / "pytest.log").read_text()[-3000:]
        assert any("resource_tracker" in c for c in _tagged(tag).values())  # a child of a child is among them
        run.send_signal(signum)
        run.wait(timeout=600)
        assert eventually(lambda: not _tagged(tag), patience=120), \
            f"left behind: {_tagged(tag)}\n" + (tmp_path / "pytest.log").read_text()[-3000:]
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        for pid in _tagged(tag):  # only what this run started: it carries the tag
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
