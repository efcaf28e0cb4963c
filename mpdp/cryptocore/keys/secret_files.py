"""Writing key files safely: mode 0600 from the first byte, never through a planted symlink,
never over an existing file unless asked, and then replaced atomically."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

PRIVATE_MODE = 0o600
PUBLIC_MODE = 0o644


def write_file(path: Path, data: bytes, *, mode: int = PRIVATE_MODE, overwrite: bool = False) -> Path:
    """Write `data` to `path` via a fresh temporary file in the same directory.

    The temporary file is created with O_EXCL|O_NOFOLLOW and its final mode, so no other
    user ever sees a readable secret; os.replace swaps it in atomically (replacing a
    symlink at `path` itself rather than its target)."""
    path = Path(path)
    if os.path.lexists(path) and not overwrite:
        raise FileExistsError(f"{path} exists; refusing to overwrite it (ask for a new key explicitly)")
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        os.fchmod(fd, mode)  # the umask may have narrowed it; never widened beyond `mode`
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise
    return path
