"""`mpdp ps` and `mpdp down --all` act on the caller's own role servers only: a role server another user runs on
the same machine is neither listed nor stopped, even when the caller is root."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from launcher import cli
from launcher.deployment import processes

OTHER_UID = 65534  # nobody


def _role_server_lookalike(token: str, uid: int | None = None) -> subprocess.Popen:
    """A process whose command line is a role server's as /proc shows it (`… launcher.cli serve …`), under `uid`:
    a shell that waits, so that it keeps those arguments (it does not exec its last command)."""
    command = ["/bin/sh", "-c", "sleep 60; true", "launcher.cli", "serve", "--topology", token]
    if uid is not None:
        command = [shutil.which("setpriv") or "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                   *command]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)
    for _ in range(100):  # setpriv execs the shell: until then /proc shows setpriv's arguments
        try:
            if Path(f"/proc/{process.pid}/cmdline").read_bytes().startswith(b"/bin/sh"):
                break
        except OSError:
            pass
        time.sleep(0.05)
    return process


@pytest.fixture
def lookalikes(monkeypatch):
    """Two role-server lookalikes, the caller's and another user's: started as that user where the caller may
    (root, with setpriv); otherwise started as the caller and reported as the other user's by /proc's reader."""
    token = f"/tmp/mpdp-lookalike-{secrets.token_hex(4)}"
    as_other = os.getuid() == 0 and shutil.which("setpriv") is not None
    mine = _role_server_lookalike(token + "-mine")
    theirs = _role_server_lookalike(token + "-theirs", OTHER_UID if as_other else None)
    if not as_other:
        owner = processes.process_owner
        monkeypatch.setattr(processes, "process_owner",
                            lambda entry: OTHER_UID if entry.name == str(theirs.pid) else owner(entry))
    try:
        yield token, mine, theirs
    finally:
        for process in (mine, theirs):
            process.kill()
            process.wait()


def test_another_users_role_server_is_neither_listed_nor_stopped(lookalikes, monkeypatch, capsys, tmp_path):
    token, mine, theirs = lookalikes
    assert processes.process_owner(Path(f"/proc/{theirs.pid}")) == OTHER_UID
    found = {pid for command, pid in processes.running_servers().items() if token in command}
    assert found == {mine.pid}
    assert {pid for command, pid in processes.running_servers(OTHER_UID).items() if token in command} == {theirs.pid}

    assert cli.main(["ps", "--run-dir", str(tmp_path / "none")]) == 0
    listed = capsys.readouterr().out
    assert f"{token}-mine" in listed and f"{token}-theirs" not in listed

    asked: list[dict[str, int]] = []  # what `down --all` would stop (never the machine's real servers in a test)
    monkeypatch.setattr(processes, "stop", lambda servers: asked.append(servers) or list(servers))
    assert cli.main(["down", "--all"]) == 0
    assert len(asked) == 1
    assert mine.pid in asked[0].values() and theirs.pid not in asked[0].values()
