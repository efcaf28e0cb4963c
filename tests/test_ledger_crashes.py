"""The privacy ledger under a full or failing disk, a power loss and kill -9: an append is all or nothing, a
tail never acknowledged is rolled back at open, tampering is still refused (docs/privacy-budget.md, "The
ledger")."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from mpdp.privacy.composition import Guarantee
from mpdp.privacy.ledger import (
    UNLIMITED,
    Disk,
    Ledger,
    LedgerError,
    LedgerUnwritable,
    head_path,
    ledger_path,
    provision,
)
from mpdp.sessions.errors import Kind, ProtocolError
from party.resources import PartyResources

SPEND = Guarantee(1.0, 1e-7, "pure", {"kind": "pure", "epsilon": 1.0, "count": 1})


class FillingDisk(Disk):
    """A disk filling up under the ledger: writes come back short, and write, fsync, rename and truncate fail
    with ENOSPC or EIO at random points, as long as `full`."""

    def __init__(self, rng: random.Random, failure_rate: float = 0.15):
        self.rng = rng
        self.rate = failure_rate
        self.full = True
        self.failures: dict[str, int] = {}

    def _fail(self, call: str, numbers=(errno.ENOSPC, errno.EIO)) -> None:
        if self.full and self.rng.random() < self.rate:
            number = self.rng.choice(numbers)
            key = f"{call} {errno.errorcode[number]}"
            self.failures[key] = self.failures.get(key, 0) + 1
            raise OSError(number, os.strerror(number))

    def write(self, handle, data):  # type: ignore[override]
        self._fail("write")
        if self.full and len(data) > 1 and self.rng.random() < 0.3:  # a nearly full disk takes part of it
            self.failures["short write"] = self.failures.get("short write", 0) + 1
            return os.write(handle, data[:self.rng.randrange(1, len(data))])
        return os.write(handle, data)

    def fsync(self, handle):  # type: ignore[override]
        self._fail("fsync", (errno.EIO,))  # otherwise a no-op: the order under a power loss is the next test's

    def ftruncate(self, handle, length):  # type: ignore[override]
        self._fail("ftruncate", (errno.EIO,))
        os.ftruncate(handle, length)

    def replace(self, source, target):  # type: ignore[override]
        self._fail("replace", (errno.ENOSPC,))
        os.replace(source, target)


def _data(directory):
    data = directory / "party_1.npz"
    data.write_bytes(b"records of party 1")
    provision(data, 1)
    return data


def _party(ledger: Ledger) -> PartyResources:
    return PartyResources(1, None, None, None, np.zeros((1, 1)), np.zeros(1), ledger=ledger)


def _sessions(data, number: int = 1) -> list[str]:
    return [entry["session"] for entry in Ledger(data, number).entries()]


@pytest.fixture
def memory_path(tmp_path):
    """A directory in memory where the machine has one (the real fsyncs outside the failing disk cost little)."""
    if not os.access("/dev/shm", os.W_OK):
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="mpdp-ledger-") as directory:
        yield Path(directory)


def test_a_disk_filling_during_appends_never_leaves_a_release_uncharged_nor_a_party_that_cannot_serve(memory_path):
    """100 parties' ledgers, each appended to while its disk fills (short writes, ENOSPC and EIO at random
    points). Every refusal is RESOURCE_EXHAUSTED or UNAVAILABLE; the ledger verifies after every attempt; every
    session whose spend returned is charged, and nothing else is (except a failure after the commit point,
    which says so); once space is back the party starts (rolling back what was never acknowledged) and spends."""
    seen: dict[str, int] = {}
    rolled_back = 0
    for trial in range(100):
        directory = memory_path / str(trial)
        directory.mkdir()
        data = _data(directory)
        disk = FillingDisk(random.Random(trial))
        party = _party(Ledger(data, 1, UNLIMITED, disk))
        charged = []
        for number in range(6):
            session = f"t{trial}-s{number}"
            try:
                party.spend(session, "dppp", SPEND)
                charged.append(session)  # released from here on
            except ProtocolError as refusal:
                assert refusal.kind in (Kind.RESOURCE_EXHAUSTED, Kind.UNAVAILABLE), refusal
                assert ("no space left" in str(refusal)) == (refusal.kind is Kind.RESOURCE_EXHAUSTED)
                if "stays recorded" in str(refusal):
                    charged.append(session)
                else:
                    assert "nothing was charged" in str(refusal)
            assert _sessions(data) == charged  # verifies, from another reader, after every attempt
        for failure, count in disk.failures.items():
            seen[failure] = seen.get(failure, 0) + count
        disk.full = False  # space is back: the party starts as `mpdp serve` does, no hand repair
        rolled_back += ledger_path(data).stat().st_size != _verified_length(data)
        Ledger(data, 1, UNLIMITED).check_writable()
        assert ledger_path(data).stat().st_size == _verified_length(data)  # the tail is gone
        assert _sessions(data) == charged
        _party(Ledger(data, 1, UNLIMITED)).spend(f"t{trial}-after", "dppp", SPEND)
        assert _sessions(data) == [*charged, f"t{trial}-after"]
        assert not [path.name for path in directory.iterdir() if path.name.endswith(".tmp")]
    # The faults really happened, and some appends really were left torn or whole past the head.
    assert {"short write", "write ENOSPC", "write EIO", "fsync EIO", "replace ENOSPC", "ftruncate EIO"} <= set(seen)
    assert rolled_back > 0


def _verified_length(data) -> int:
    """Bytes up to and including the line the head names."""
    lines = ledger_path(data).read_bytes().splitlines(keepends=True)
    return sum(len(line) for line in lines[:json.loads(head_path(data).read_bytes())["lines"]])


def test_every_state_a_power_loss_can_leave_opens_to_the_entries_acknowledged(tmp_path, caplog):
    """The line is fsynced before the head is replaced, so after a power loss the disk holds the old file plus
    any prefix of the new line (or all of it) under the old head, or the new line under the new head (perhaps
    beside a staged head file). Each opens: the first kind to the old entries, rolled back with a logged
    reason; the second to the new."""
    data = _data(tmp_path)
    ledger = Ledger(data, 1, UNLIMITED)
    ledger.spend("s0", "pathak", SPEND)
    old_file, old_head = ledger_path(data).read_bytes(), head_path(data).read_bytes()
    ledger.spend("s1", "pathak", SPEND)
    new_file, new_head = ledger_path(data).read_bytes(), head_path(data).read_bytes()
    line = new_file[len(old_file):]
    for cut in sorted({0, 1, 2, len(line) - 2, len(line) - 1, len(line), *random.Random(3).sample(range(len(line)), 12)}):
        ledger_path(data).write_bytes(old_file + line[:cut])
        head_path(data).write_bytes(old_head)
        assert _sessions(data) == ["s0"]  # a reader ignores the tail
        caplog.clear()
        with caplog.at_level("WARNING", logger="mpdp.privacy.ledger"):
            Ledger(data, 1).check_writable()
        assert ledger_path(data).read_bytes() == old_file
        assert ("rolled back" in caplog.text) == (cut > 0)
    ledger_path(data).write_bytes(new_file)
    head_path(data).write_bytes(new_head)
    (tmp_path / (head_path(data).name + ".4242.tmp")).write_bytes(new_head[:3])  # a staged head, never renamed
    Ledger(data, 1).check_writable()
    assert _sessions(data) == ["s0", "s1"]


TAIL_TAMPERING = {
    "two lines after the head's": lambda line: line + line,
    "a whole line after the head's that does not chain on": lambda line: line.replace(b'"prev": "', b'"prev": "0'),
    "a line after the head's, then a torn one": lambda line: line + line[:9],
}


@pytest.mark.parametrize("tampering", sorted(TAIL_TAMPERING))
def test_what_no_interrupted_append_leaves_is_tampering_and_refused(tmp_path, tampering):
    data = _data(tmp_path)
    ledger = Ledger(data, 1, UNLIMITED)
    ledger.spend("s0", "pathak", SPEND)
    acknowledged, head = ledger_path(data).read_bytes(), head_path(data).read_bytes()
    ledger.spend("s1", "pathak", SPEND)
    line = ledger_path(data).read_bytes()[len(acknowledged):]
    ledger_path(data).write_bytes(acknowledged + TAIL_TAMPERING[tampering](line))
    head_path(data).write_bytes(head)
    after = ledger_path(data).read_bytes()
    with pytest.raises(LedgerError, match="fails its check"):
        Ledger(data, 1).check_writable()
    with pytest.raises(LedgerError, match="fails its check"):
        Ledger(data, 1, UNLIMITED).spend("s2", "pathak", SPEND)
    assert ledger_path(data).read_bytes() == after  # never repaired


def test_a_failure_after_the_commit_point_keeps_the_entry_and_says_so(tmp_path):
    """Only the directory's fsync follows the head's rename: if it fails, the entry is kept (a release on it
    cannot be ruled out if the rename survives) and the session is refused, saying it was charged."""

    class FailingDirectorySync(Disk):
        @staticmethod
        def fsync(handle):
            if os.path.isdir(f"/proc/self/fd/{handle}"):
                raise OSError(errno.EIO, os.strerror(errno.EIO))
            os.fsync(handle)

    data = _data(tmp_path)
    with pytest.raises(LedgerUnwritable) as failed:
        Ledger(data, 1, UNLIMITED, FailingDirectorySync()).spend("s0", "pathak", SPEND)
    assert failed.value.charged and not failed.value.no_space
    assert _sessions(data) == ["s0"]


KILLED_APPENDER = """
import sys
from mpdp.privacy.composition import Guarantee
from mpdp.privacy.ledger import UNLIMITED, Ledger
ledger = Ledger(sys.argv[1], 1, UNLIMITED)
for number in range(10_000):
    ledger.spend(f"{sys.argv[2]}-{number}", "dppp", Guarantee(1.0, 0.0, "pure"))
    print(f"{sys.argv[2]}-{number}", flush=True)
"""


@pytest.mark.network
def test_kill_9_of_an_appending_process_leaves_a_ledger_that_opens_with_every_acknowledged_entry(tmp_path):
    """A process appending in a loop is killed at a random moment, five times: each time the ledger opens (an
    interrupted append rolled back), and holds every entry whose spend had returned."""
    data = _data(tmp_path)
    rng = random.Random(7)
    acknowledged: list[str] = []
    for run in range(5):
        child = subprocess.Popen([sys.executable, "-c", KILLED_APPENDER, str(data), f"run{run}"],
                                 stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
        try:
            for _ in range(rng.randrange(1, 30)):
                line = child.stdout.readline().strip()
                assert line, "the appending process ended by itself"
                acknowledged.append(line)
            for _ in range(rng.randrange(0, 2000)):  # a random moment of the next appends
                pass
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
            child.stdout.close()
        Ledger(data, 1, UNLIMITED).check_writable()
        sessions = _sessions(data)
        assert ledger_path(data).stat().st_size == _verified_length(data)
        assert set(acknowledged) <= set(sessions)
        assert len(sessions) == len(set(sessions))


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 256 KiB tmpfs (root only: it is mounted and unmounted here), to fill for real."""
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_real_full_tmpfs_refuses_without_charging_and_serves_once_space_is_back(small_tmpfs):
    """Appends of 10 KB entries to a tmpfs left with 0 to 5 free pages: the kernel writes short or refuses
    (the tear at byte 4 096 of a full disk);
    each spend is charged and returned, or refused with RESOURCE_EXHAUSTED and recorded nowhere; deleting the
    filler lets the party start and spend again."""
    data = _data(small_tmpfs)
    filler = small_tmpfs / "filler"
    large = Guarantee(1.0, 0.0, "pure " + "x" * 10_000, {"kind": "pure", "epsilon": 1.0, "count": 1})
    short = []

    class Counting(Disk):
        @staticmethod
        def write(handle, content):
            written = os.write(handle, content)
            short.append(written < len(content))
            return written

    party = _party(Ledger(data, 1, UNLIMITED, Counting()))
    charged, refused = [], 0
    for attempt in range(12):
        handle = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:  # fill the disk, then free `attempt % 6` pages
            while os.write(handle, b"\0" * 4096):
                pass
        except OSError as error:
            assert error.errno == errno.ENOSPC
        finally:
            os.close(handle)
        os.truncate(filler, max(0, filler.stat().st_size - 4096 * (attempt % 6)))
        try:
            party.spend(f"s{attempt}", "dppp", large)
            charged.append(f"s{attempt}")
        except ProtocolError as refusal:
            assert refusal.kind is Kind.RESOURCE_EXHAUSTED and "nothing was charged" in str(refusal)
            refused += 1
        assert _sessions(data) == charged
    assert refused and charged and any(short)  # all three really happened (the kernel's own short writes)
    filler.unlink()
    Ledger(data, 1, UNLIMITED).check_writable()
    _party(Ledger(data, 1, UNLIMITED)).spend("after", "dppp", large)
    assert _sessions(data) == [*charged, "after"]


@pytest.mark.network
def test_a_party_whose_disk_is_full_refuses_with_resource_exhausted_and_serves_once_space_is_back(tmp_path):
    """Party 2's ledger cannot take a line (test mode: every write is ENOSPC). A Pathak session fails with
    party 2's own RESOURCE_EXHAUSTED reason, and nothing is recorded in party 2's ledger; restarted on a disk
    with space (no hand repair), it takes the next session and is charged for it."""
    import grpc

    from launcher.deployment import processes
    from mpdp.sessions.identity import party
    from tests.deployment import deployment

    with deployment(tmp_path, 3, faults={2: "ledger-no-space"}) as d:
        full = d.topology.entry(party(2)).data
        with pytest.raises(grpc.RpcError) as failed:
            d.run_pathak(session_id="full")
        assert "party 2 cannot record the session in its privacy ledger: no space left" in failed.value.details()
        assert _sessions(full, 2) == []
        processes.restart(d.run.path, party(2), test_mode=True)
        d.run_pathak(session_id="space-again")
        assert _sessions(full, 2) == ["space-again"]


def test_a_reader_never_mistakes_an_append_in_progress_for_tampering(memory_path):
    """`mpdp budget`, and a party's check for a reused session id, read (under a shared lock) while appends run."""
    import threading

    data = _data(memory_path)
    done = threading.Event()
    seen: list[int] = []

    def append():
        ledger = Ledger(data, 1, UNLIMITED)
        for number in range(150):
            ledger.spend(f"s{number}", "pathak", SPEND)
        done.set()

    writer = threading.Thread(target=append)
    writer.start()
    try:
        while not done.is_set():
            seen.append(len(Ledger(data, 1).entries()))  # raises LedgerError on anything it cannot accept
    finally:
        writer.join()
    assert seen == sorted(seen) and len(_sessions(data)) == 150


def test_a_read_only_copy_of_a_ledger_can_be_read_but_not_spent_from(tmp_path, monkeypatch):
    """An auditor's read-only copy (the lock file cannot be made: EROFS): readers read without the lock; a
    writer refuses, saying why."""
    data = _data(tmp_path)
    Ledger(data, 1, UNLIMITED).spend("s0", "pathak", SPEND)
    real_open = os.open

    def read_only(path, flags, *args):
        if str(path).endswith(".lock") and flags & (os.O_WRONLY | os.O_CREAT):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", read_only)
    assert _sessions(data) == ["s0"]
    with pytest.raises(LedgerUnwritable, match="Read-only file system"):
        Ledger(data, 1, UNLIMITED).spend("s1", "pathak", SPEND)
