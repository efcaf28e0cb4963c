"""The key ceremony over real processes when a holder stops answering or the launcher is killed: a stopped
(SIGSTOP) holder aborts the ceremony within the step deadline, named; kill -9 of the launcher at each step leaves
no process, no key file and no directory holding a key."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from launcher.common.errors import CeremonyError
from launcher.deployment import distributed_keygen
from mpdp.cryptocore.paillier import keyfiles
from tests.waiting import eventually

pytestmark = pytest.mark.network
ROOT = Path(__file__).resolve().parent.parent


def test_a_stopped_holder_aborts_the_ceremony_within_the_step_deadline_named(tmp_path, monkeypatch):
    """Holder 2 is stopped once every holder serves: the others wait for its first round for the step deadline
    (3 s here, MPDP_KEYGEN_STEP_DEADLINE_S; 60 s by default), abort naming it, and nothing is left."""
    monkeypatch.setenv(distributed_keygen.STEP_DEADLINE_VARIABLE, "3")
    wait = distributed_keygen._wait_serving

    def serving_then_two_stops(topology, holders, work, pids):
        wait(topology, holders, work, pids)
        os.kill(pids["party/2"], signal.SIGSTOP)

    monkeypatch.setattr(distributed_keygen, "_wait_serving", serving_then_two_stops)
    directory = tmp_path / "keys"
    shares = {j: directory / keyfiles.share_file_name(j) for j in (1, 2, 3)}
    with pytest.raises(CeremonyError, match=r"no round-1 message from party/2 within 3 s"):
        distributed_keygen.ceremony(shares, [directory / keyfiles.PUBLIC_KEY_FILE], 3, 1024, batch=64)
    assert not list(directory.iterdir())


def _children(pid: int) -> dict[int, str]:
    """The processes `pid` started (pid → start time)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found[int(entry.name)] = fields[19]
    return found


def _gone(processes: dict[int, str]) -> bool:
    for pid, started in processes.items():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[19] == started and fields[0] != "Z":
            return False
    return True


@pytest.mark.parametrize("step", ["starting 3 key holders", "holders serving", "committing"])
def test_kill_9_of_the_launcher_at_each_step_leaves_nothing(tmp_path, step):
    """`mpdp keygen --keygen distributed` is killed with SIGKILL right after its progress line for `step`: the
    holders die with it, its guard removes the ceremony's directory (CA, TLS keys) and every key file written."""
    directory = tmp_path / "keys"
    launcher = subprocess.Popen([sys.executable, "-m", "launcher.cli", "keygen", "--keygen", "distributed",
                                 "--parties", "3", "--bits", "1024", "--out", str(directory)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert launcher.stderr is not None
    seen = []
    for line in launcher.stderr:
        seen.append(line)
        if step in line:
            break
    children = _children(launcher.pid)
    launcher.kill()
    launcher.wait()
    assert step in seen[-1], "".join(seen)
    assert eventually(lambda: _gone(children), patience=60), children
    left = [path for path in directory.rglob("*") if path.is_file()] if directory.exists() else []
    assert left == []
    assert not list(directory.glob(".keygen-*")) if directory.exists() else True


@pytest.mark.slow  # a whole ceremony after a second start: 10–30 s on a shared machine
def test_a_holder_port_taken_before_it_binds_starts_the_holders_again_on_other_ports(tmp_path, monkeypatch):
    """The race no probe closes: another process takes a chosen port before the holder binds it. The holder exits
    at once (its log names the port), and the ceremony starts its holders again, once, on other ports."""
    import socket

    from launcher.deployment import children

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    real, calls = children.free_ports, []

    def first_one_taken(count, host="127.0.0.1"):
        calls.append(count)
        ports = real(count, host)
        return [taken.getsockname()[1], *ports[1:]] if len(calls) == 1 else ports

    monkeypatch.setattr(children, "free_ports", first_one_taken)
    directory = tmp_path / "keys"
    shares = {j: directory / keyfiles.share_file_name(j) for j in (1, 2, 3)}
    try:
        distributed_keygen.ceremony(shares, [directory / keyfiles.PUBLIC_KEY_FILE], 3, 1024, batch=64)
    finally:
        taken.close()
    assert len(calls) == 2 and all(path.exists() for path in shares.values())
    assert sorted(path.name for path in directory.iterdir()) == sorted(
        [keyfiles.PUBLIC_KEY_FILE, *(path.name for path in shares.values())])
