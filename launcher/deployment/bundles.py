"""Role bundles: one directory per role identity holding only what that role needs (spec README, "Each role
holds only its own secrets").

A bundle holds the public topology, the public key, the CA certificate, its own certificate and TLS key, and
as the role requires its key share (a key holder), its data (a party; Charlie's public X_aux) or the
client's public/test split. Directories are 0700 and files 0600, including directories that existed before
with wider modes; files are created under a umask of 077 so no file is ever readable by another user, even
for a moment. On one machine every role runs as the same uid: the modes protect a deployment from other
local users, not one role from another. Separate containers (compose) or hosts give that separation.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mpdp.wire.identity import Principal

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600
PRIVATE_UMASK = 0o077
TOPOLOGY_FILE = "topology.toml"


def bundle_name(principal: Principal) -> str:
    """The directory (and compose volume) of a role identity: aggregator, curator, client, party-3, party-1-5."""
    if principal.role != "party":
        return principal.role
    return f"party-{principal.first}" if principal.first == principal.last else f"party-{principal.first}-{principal.last}"


def parse_bundle_name(name: str) -> Principal | None:
    role, _, numbers = name.partition("-")
    try:
        return Principal.parse(f"{role}/{numbers}" if numbers else f"{role}/0")
    except ValueError:
        return None


@contextmanager
def private_umask() -> Iterator[None]:
    """Every file and directory created inside is private to its owner from its first byte."""
    previous = os.umask(PRIVATE_UMASK)
    try:
        yield
    finally:
        os.umask(previous)


def private_directory(path: Path) -> Path:
    """`path` as a 0700 directory of ours: created, or narrowed if it existed (a 0777 one included).
    A symlink or another user's directory is refused: its owner could read what is written there."""
    path = Path(path)
    path.parent.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
    try:
        path.mkdir(mode=DIRECTORY_MODE)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise ValueError(f"{path} is not a directory (a symlink is refused)")
    if info.st_uid != os.getuid() and os.getuid() != 0:  # root re-deals into bundles it gave away (`--owner`)
        raise PermissionError(f"{path} belongs to uid {info.st_uid}, not to this user; refusing to write there")
    os.chmod(path, DIRECTORY_MODE)
    return path


def seal(root: Path) -> None:
    """Every directory under `root` 0700 and every file 0600 (what a previous run left too); symlinks refused."""
    root = Path(root)
    os.chmod(root, DIRECTORY_MODE)
    for directory, subdirectories, files in os.walk(root):
        for name in subdirectories + files:
            path = Path(directory) / name
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                raise ValueError(f"{path} is a symlink; a bundle holds only its own files")
            os.chmod(path, DIRECTORY_MODE if stat.S_ISDIR(info.st_mode) else FILE_MODE)


def open_private(path: Path, append: bool = True) -> int:
    """A file descriptor for writing `path` with mode 0600, never following a symlink."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if append else os.O_TRUNC)
    fd = os.open(path, flags, FILE_MODE)
    if stat.S_ISREG(os.fstat(fd).st_mode):  # narrows a file that existed with a wider mode; not /dev/null
        os.fchmod(fd, FILE_MODE)
    return fd


def give(root: Path, uid: int) -> None:
    """Hand a bundle to its role's uid (compose runs each role as its own uid; needs root)."""
    os.chown(root, uid, uid, follow_symlinks=False)
    for directory, subdirectories, files in os.walk(root):
        for name in subdirectories + files:
            os.chown(Path(directory) / name, uid, uid, follow_symlinks=False)
