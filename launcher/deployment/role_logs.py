"""A role process's log file is size-capped and rotated.

`mpdp up` starts each role with its standard output and error appended to `logs/ROLE_ID.log`. When
that is a regular file, the role logs through a rotating handler on the same file, and after each
rotation points its standard output and error at the fresh file, so whatever bypasses `logging` (a
traceback, gRPC's own messages) is capped with it. Output to a terminal or a pipe (a container's log
driver) is left as it is.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import stat
import sys
from pathlib import Path

MAX_BYTES = 16 * 1024 * 1024
BACKUPS = 3
MAX_BYTES_VARIABLE = "MPDP_LOG_MAX_BYTES"  # another cap, for an operator (or a test) that wants one
FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"


class _RotatingOutput(logging.handlers.RotatingFileHandler):
    """Rotates like its base class, then makes the fresh file the process's standard output and error."""

    def doRollover(self) -> None:
        super().doRollover()
        if self.stream is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            for descriptor in (1, 2):
                os.dup2(self.stream.fileno(), descriptor)


def log_file_of_output() -> Path | None:
    """The regular file this process's standard error is appended to, if it is one."""
    try:
        if not stat.S_ISREG(os.fstat(2).st_mode):
            return None
        path = Path(os.readlink("/proc/self/fd/2"))
    except OSError:
        return None
    return path if path.is_absolute() and path.exists() else None


def max_bytes() -> int:
    text = os.environ.get(MAX_BYTES_VARIABLE, "")
    if not text:
        return MAX_BYTES
    if not text.isdigit() or int(text) < 1024:
        raise ValueError(f"{MAX_BYTES_VARIABLE} must be a whole number of bytes, at least 1024")
    return int(text)


def rotate(level: str | int) -> Path | None:
    """Log at `level` through a rotating handler on the file standard error goes to (None: it is not a file,
    and logging goes to standard error as usual)."""
    path = log_file_of_output()
    root = logging.getLogger()
    root.setLevel(level)
    if path is None:
        if not root.handlers:
            logging.basicConfig(level=level, format=FORMAT)
        return None
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = _RotatingOutput(path, maxBytes=max_bytes(), backupCount=BACKUPS, encoding="utf-8")
    handler.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(handler)
    return path
