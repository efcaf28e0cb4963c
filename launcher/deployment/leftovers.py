"""What an interrupted key ceremony leaves is removed even when the launcher is killed with SIGKILL (no handler of
its own runs then): a guard process, started before anything secret is written, outlives the launcher and waits
on a pipe from it. When the pipe closes (the launcher exited, however) the guard kills the holder processes it
was told of (they also die with the launcher: PR_SET_PDEATHSIG), waits until they are gone, so that none writes
after it, and removes the ceremony's directory (its CA, the holders' TLS private keys, their logs) and, unless
the launcher said the ceremony completed, every key file the ceremony wrote.

    python -m launcher.deployment.leftovers        (the launcher's child; reads its instructions on stdin)

stdin: one JSON line {"directory": …, "keys": {path: mtime_ns or null}}, then lines `pid N` (a holder started)
and `done` (the key files stay). A key file counts as written by the ceremony when it did not exist before it
(null) or was changed since (another mtime). A guard process is a few MB for the ceremony's seconds or minutes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

HOLDERS_GONE_TIMEOUT_S = 10.0


class Guard:
    """The launcher's end: tell the guard of each holder, then that the ceremony completed (or not), and close."""

    def __init__(self, directory: Path, keys: list[Path]):
        before = {str(path): (path.stat().st_mtime_ns if path.exists() else None) for path in keys}
        self._process = subprocess.Popen([sys.executable, "-m", "launcher.deployment.leftovers"],
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         start_new_session=True, text=True,  # outlives us; no terminal's Ctrl-C
                                         cwd=Path(__file__).resolve().parent.parent.parent)
        assert self._process.stdin is not None
        self._pipe: IO[str] = self._process.stdin
        self._send(json.dumps({"directory": str(directory), "keys": before}))

    def _send(self, line: str) -> None:
        self._pipe.write(line + "\n")
        self._pipe.flush()

    def holder_started(self, pid: int) -> None:
        self._send(f"pid {pid}")

    def close(self, completed: bool) -> None:
        """The launcher's own exit path: the guard does what it would after a SIGKILL, and we wait for it."""
        try:
            if completed:
                self._send("done")
            self._pipe.close()
        except OSError:  # the guard died (killed by hand): the launcher's own clean-up still ran
            pass
        try:
            self._process.wait(HOLDERS_GONE_TIMEOUT_S + 5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def _start_time(pid: int) -> str | None:
    """A process's start time (field 22 of /proc/PID/stat): a pid reused by another process has another."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(pid: int, started: str | None) -> bool:
    now = _start_time(pid)
    if now is None or now != started:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie writes nothing more


def clean(directory: Path, keys: dict[str, int | None], holders: dict[int, str | None], completed: bool) -> None:
    for pid, started in holders.items():
        if _alive(pid, started):
            try:
                os.killpg(pid, signal.SIGKILL)  # the holder leads its own process group
            except (ProcessLookupError, PermissionError):
                pass
    deadline = time.monotonic() + HOLDERS_GONE_TIMEOUT_S
    while any(_alive(pid, started) for pid, started in holders.items()) and time.monotonic() < deadline:
        time.sleep(0.05)
    shutil.rmtree(directory, ignore_errors=True)
    for name in keys:  # a write a holder's death cut short (secret_files writes a temporary file, then renames it)
        for partial in Path(name).parent.glob(f".{Path(name).name}.*.tmp"):
            partial.unlink(missing_ok=True)
    if completed:
        return
    shares = {Path(path): mtime for path, mtime in keys.items() if "key_share" in Path(path).name}
    written = [path for path, mtime in shares.items() if path.exists() and path.stat().st_mtime_ns != mtime]
    for path in written:
        path.unlink(missing_ok=True)
    if written:  # the public key, written last, goes with the shares it belongs to
        for name, mtime in keys.items():
            public = Path(name)
            if public not in shares and public.exists() and public.stat().st_mtime_ns != mtime:
                public.unlink(missing_ok=True)


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the launcher's Ctrl-C is the launcher's; we clean up after it
    first = sys.stdin.readline()
    if not first:
        return 0
    instructions = json.loads(first)
    holders: dict[int, str | None] = {}
    completed = False
    for line in sys.stdin:  # until the launcher closes the pipe or dies
        word, _, rest = line.strip().partition(" ")
        if word == "pid" and rest.isdigit():
            holders[int(rest)] = _start_time(int(rest))
        elif word == "done":
            completed = True
    clean(Path(instructions["directory"]), instructions["keys"], holders, completed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
