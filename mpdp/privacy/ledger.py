"""A party's privacy ledger: what it has spent on one data set, an append-only hash chain next to the data.

The file is JSON lines. Its first line, the header, binds it to the party and the data file (and carries a
random nonce, so that a ledger made again by hand is not the one the head names); every later line is one
spend and carries `prev`, the SHA-256 of the line before it. A head file beside it names the number of lines
and the last line's SHA-256 after every append. Read at start and before every append: an edited, reordered
or removed line breaks the chain; a truncated file is shorter than its head; a missing file or head is an
error, never a fresh budget (`provision` makes both when the deployment is prepared).

An append is all or nothing. The head is its commit point: the whole line is written (a loop over short
writes) and fsynced, then the head is replaced atomically and the directory fsynced; only then does `spend`
return. Any failure before the head is replaced (a short write, ENOSPC, EIO) truncates the file back to its
previous length. What a crash, a power loss or a failed truncation leaves after the line the head names --
at most one line, torn or whole, that chains on -- was never acknowledged, so nothing was released on it:
readers ignore it and the next writer (`spend`, `check_writable` at start) rolls it back and logs why.
Anything else after the head's line, or any change up to it, is tampering and refused.

Spend first, release after: `spend` refuses a session that would take the composed total over the budget,
and otherwise appends the entry durably before it returns.

A refund is a line of its own, never an edit: `refund` appends, under the same commit rules, a line naming the
SHA-256 of the spend it cancels (a spend of the same session, earlier in the chain, not refunded before). A
refunded spend no longer counts towards the total; the session id stays used. Only the party's own code
refunds, and only a charge nothing of which left it (party/charge.py); a reader of this module's format from
before refunds existed finds a line that is not a spend and refuses the ledger (it fails closed).
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import hashlib
import json
import logging
import math
import os
import secrets
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mpdp.privacy.composition import Composed, Guarantee, compose

FORMAT = "mpdp-privacy-ledger/2"
SUFFIX = ".privacy-ledger.jsonl"
HEAD_SUFFIX = ".head"
MAX_LEDGER_BYTES = 16 * 1024 * 1024  # a larger file is not one we wrote
FILE_MODE = 0o600
DIRECTORY_MODE = 0o700
GENESIS = "0" * 64


class BudgetExceeded(Exception):
    pass


class LedgerError(ValueError):
    """The ledger is missing, tampered with or unwritable: the party spends nothing until its operator acts."""


class LedgerUnwritable(LedgerError):
    """An append failed on the disk (no space, an I/O error). `charged`: False when the file was rolled back
    (nothing recorded, the common case), True when it failed after its commit point (the directory's fsync
    after the head was replaced): the entry stays, since a release on it cannot be ruled out later."""

    def __init__(self, message: str, error_number: int | None, charged: bool):
        super().__init__(message)
        self.errno = error_number
        self.charged = charged

    @property
    def no_space(self) -> bool:
        return self.errno in (errno.ENOSPC, errno.EDQUOT)


log = logging.getLogger(__name__)


class Disk:
    """The system calls that write a ledger: the operating system's, or a failing disk's in tests."""

    write = staticmethod(os.write)
    fsync = staticmethod(os.fsync)
    ftruncate = staticmethod(os.ftruncate)
    replace = staticmethod(os.replace)


SYSTEM_DISK = Disk()


@dataclass(frozen=True)
class Budget:
    epsilon: float  # math.inf: unlimited (asked for explicitly with `inf`)
    delta: float

    @classmethod
    def parse(cls, text: str) -> "Budget":
        """`ε,δ`, e.g. `4,1e-5`, or `inf` for no limit (spending still recorded)."""
        if text.strip() == "inf":
            return UNLIMITED
        parts = text.split(",")
        try:
            epsilon, delta = (float(part) for part in parts)
        except ValueError:
            raise ValueError(f"a budget is `ε,δ` (e.g. `4,1e-5`) or `inf`, not {text!r}") from None
        if not (math.isfinite(epsilon) and epsilon > 0 and 0 <= delta < 1):
            raise ValueError(f"a budget needs ε > 0 and 0 ≤ δ < 1 (or is `inf`), not {text!r}")
        return cls(epsilon, delta)

    @property
    def unlimited(self) -> bool:
        return self.epsilon == math.inf

    def argument(self) -> str:
        """The `--budget` value that gives this budget again."""
        return "inf" if self.unlimited else f"{self.epsilon!r},{self.delta!r}"

    def to_json(self) -> list | str:
        return "inf" if self.unlimited else [self.epsilon, self.delta]

    def allows(self, total: Composed) -> bool:
        if self.unlimited:
            return True
        return (total.epsilon is not None and total.epsilon <= self.epsilon * (1 + 1e-12)
                and total.delta <= self.delta * (1 + 1e-12))

    def __str__(self) -> str:
        return "unlimited" if self.unlimited else f"ε = {self.epsilon:g}, δ = {self.delta:g}"


UNLIMITED = Budget(math.inf, 1.0)
# Each party's budget per data set unless its operator sets another (docs/privacy-budget.md says why): the
# README's commands at their defaults, in its order, compose to about ε = 15.9, δ = 1e-5 within it.
DEFAULT_BUDGET = Budget(20.0, 2e-5)


def ledger_path(data_file: Path) -> Path:
    return Path(str(data_file) + SUFFIX)


def head_path(data_file: Path) -> Path:
    return Path(str(ledger_path(data_file)) + HEAD_SUFFIX)


_digests: dict[tuple[str, int, int], str] = {}


def _sha256(path: Path) -> str:
    """The data file's SHA-256, recomputed only when its size or mtime changed (spending is on every open)."""
    status = path.stat()
    key = (str(path), status.st_size, status.st_mtime_ns)
    if key not in _digests:
        if len(_digests) >= 1024:
            _digests.clear()
        _digests[key] = _file_digest(path)
    return _digests[key]


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _line_digest(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def _line(record: dict) -> bytes:
    return json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False).encode() + b"\n"


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def describe(total: Composed | Guarantee) -> str:
    epsilon = "unbounded" if total.epsilon is None else f"{total.epsilon:.4g}"
    return f"ε = {epsilon}, δ = {total.delta:.3g}"


def _fsync_directory(directory: Path, disk: Disk = SYSTEM_DISK) -> None:
    handle = os.open(directory, os.O_RDONLY)
    try:
        disk.fsync(handle)
    finally:
        os.close(handle)


def _write_all(handle: int, content: bytes, disk: Disk) -> None:
    """All of `content`: `write` may write less than asked (a nearly full disk) without raising."""
    view = memoryview(content)
    while view:
        written = disk.write(handle, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, "the disk took no more bytes")
        view = view[written:]


def _staged(path: Path, content: bytes, disk: Disk) -> Path:
    """A temporary file beside `path` holding `content`, mode 0600, fsynced (removed again if that fails)."""
    temporary = path.with_name(path.name + f".{os.getpid()}.tmp")
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        _write_all(handle, content, disk)
        disk.fsync(handle)
    except BaseException:
        os.close(handle)
        temporary.unlink(missing_ok=True)
        raise
    os.close(handle)
    return temporary


def _write_atomically(path: Path, content: bytes, disk: Disk = SYSTEM_DISK) -> None:
    """`path` with `content`, mode 0600, atomically (temporary file, fsync, rename, fsync of the directory)."""
    temporary = _staged(path, content, disk)
    try:
        disk.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent, disk)


def provision(data_file: Path, party: int) -> Path:
    """When a deployment is prepared: the party's ledger (header only) and head, unless one exists, which is
    checked and kept (its spending stays). A head without its ledger is a deleted ledger: refused."""
    ledger = Ledger(data_file, party)
    if ledger.path.exists() or ledger.head.exists():
        ledger.check_writable()  # rolls back an append that was never acknowledged
        return ledger.path
    directory = ledger.path.parent
    directory.chmod(DIRECTORY_MODE)
    header = _line({"format": FORMAT, "party": party, "data_file": ledger.data_file.name, "created": _now(),
                    "data_sha256": _sha256(ledger.data_file), "nonce": secrets.token_hex(16),
                    "unit": "one record of this data set (replacement); a party-unit guarantee implies it"})
    _write_atomically(ledger.path, header)
    _write_atomically(ledger.head, _line({"lines": 1, "sha256": _line_digest(header)}))
    return ledger.path


class Ledger:
    def __init__(self, data_file: Path, party: int, budget: Budget = DEFAULT_BUDGET, disk: Disk = SYSTEM_DISK):
        self.data_file = Path(data_file)
        self.party = party
        self.path = ledger_path(self.data_file)
        self.head = head_path(self.data_file)
        self.budget = budget
        self.disk = disk
        self._lock = threading.Lock()
        self._checked: tuple[str, str, Composed] | None = None  # (head digest, guarantee, total): check → spend

    def check_writable(self) -> None:
        """At start-up: a party whose ledger is missing, tampered with or unwritable does not serve; an append
        that was never acknowledged (a crash, a full disk) is rolled back first."""
        with self._exclusive():
            self._read(roll_back=True)
        if not os.access(self.path.parent, os.W_OK) or not os.access(self.path, os.W_OK):
            raise LedgerError(f"cannot write the privacy ledger {self.path}")
        for path in (self.path, self.head):
            if path.stat().st_mode & 0o077:
                path.chmod(FILE_MODE)  # the ledger says what was released about the data: its owner's only

    def _read(self, roll_back: bool = False) -> list[bytes]:
        """The verified lines (header first) up to the one the head names. Raises LedgerError on anything this
        module did not write. A tail never acknowledged is ignored, or truncated away when `roll_back` (the
        caller holds the lock)."""
        try:
            if self.path.stat().st_size > MAX_LEDGER_BYTES:
                raise LedgerError(f"{self.path} is larger than a ledger can be")
            # The head first: an append writes its line before it replaces the head, so even a reader without
            # the lock would see lines past the head (never a head past the file).
            head = json.loads(self.head.read_bytes())
            raw = self.path.read_bytes()
        except FileNotFoundError as error:
            raise LedgerError(f"the privacy ledger {error.filename} is missing: a ledger is made when the deployment "
                              "is prepared and never started afresh; restore it (with its head)") from None
        except (ValueError, OSError) as error:
            raise LedgerError(f"the privacy ledger {self.path} cannot be read ({error})") from None
        try:
            named, digest = int(head["lines"]), str(head["sha256"])
        except (KeyError, TypeError, ValueError):
            raise self._tampered("its head is unreadable") from None
        whole = raw.splitlines(keepends=True)
        if whole and not whole[-1].endswith(b"\n"):
            whole.pop()  # torn: only acceptable as the unacknowledged tail, checked below
        if not 1 <= named <= len(whole):
            raise self._tampered(f"it has {len(whole)} whole lines; its head names {named} (truncated or torn)")
        lines = whole[:named]
        previous = GENESIS
        spends: dict[str, dict] = {}  # digest → an earlier spend that no refund has named yet
        for number, line in enumerate(lines):
            record = self._check_line(number, line, previous)
            previous = _line_digest(line)
            if number == 0:
                continue
            if "refund" in record:
                self._check_refund(number, record, spends)
            else:
                spends[previous] = record
        if previous != digest:
            raise self._tampered(f"line {named}, the last its head names, is not the one it names (edited, "
                                 "replaced or rolled back)")
        tail = raw[sum(map(len, lines)):]
        if tail:
            self._unacknowledged(named, tail, previous, roll_back)
        return lines

    def _check_line(self, number: int, line: bytes, previous: str) -> dict:
        try:
            record = json.loads(line)
        except ValueError:
            raise self._tampered(f"line {number + 1} is not JSON") from None
        if not isinstance(record, dict):
            raise self._tampered(f"line {number + 1} is not an entry")
        if number == 0:
            if record.get("format") != FORMAT:
                raise self._tampered("the header names no known format")
            if record.get("party") != self.party or record.get("data_file") != self.data_file.name:
                raise self._tampered(f"it belongs to party {record.get('party')}'s {record.get('data_file')!r}, "
                                     f"not party {self.party}'s {self.data_file.name!r}")
            return record
        if record.get("prev") != previous:
            raise self._tampered(f"line {number + 1} does not follow the line before it")
        if "refund" in record:
            if not all(isinstance(record.get(key), str) for key in ("refund", "session", "protocol", "reason")):
                raise self._tampered(f"line {number + 1} is not a refund")
            return record
        try:
            Guarantee.from_json(record["guarantee"])
            str(record["session"]), str(record["protocol"])
        except (ValueError, KeyError, TypeError, AttributeError):
            raise self._tampered(f"line {number + 1} is not a spend") from None
        return record

    def _check_refund(self, number: int, record: dict, spends: dict[str, dict]) -> None:
        """A refund names an earlier spend of its session, by that line's SHA-256, that no refund named before."""
        spend = spends.pop(record["refund"], None)
        if spend is None:
            raise self._tampered(f"line {number + 1} refunds no earlier spend that was not refunded already")
        if spend["session"] != record["session"] or spend["protocol"] != record["protocol"]:
            raise self._tampered(f"line {number + 1} refunds a spend of another session")

    def _unacknowledged(self, named: int, tail: bytes, previous: str, roll_back: bool) -> None:
        """`tail` follows the line the head names. One append in flight at a time (the lock) leaves at most one
        line there: torn (no newline), or whole and chaining on. Anything else was not written here."""
        newlines = tail.count(b"\n")
        if newlines > 1 or (newlines == 1 and not tail.endswith(b"\n")):
            raise self._tampered(f"{newlines} lines follow the line its head names; an interrupted append leaves "
                                 "at most one")
        if newlines == 1:
            self._check_line(named, tail, previous)
        if not roll_back:
            return
        length = self.path.stat().st_size - len(tail)
        try:
            handle = os.open(self.path, os.O_WRONLY)
            try:
                self.disk.ftruncate(handle, length)
                self.disk.fsync(handle)
            finally:
                os.close(handle)
        except OSError as error:
            raise self._unwritable(error, charged=False) from None
        log.warning("privacy ledger %s: rolled back %d bytes after the line its head names (%s): an append "
                    "interrupted before it was acknowledged (a crash, a full disk or an I/O error); nothing was "
                    "released on it", self.path, len(tail), "a whole line" if newlines else "a torn line")

    def _tampered(self, why: str) -> LedgerError:
        return LedgerError(f"the privacy ledger {self.path} fails its check: {why}; it is never reset "
                           "automatically: restore it or move it away deliberately")

    def entries(self) -> list[dict]:
        """The spends and refunds, oldest first (the header excluded), after checking the chain and the head.
        Under a shared lock: no append is half done while it reads (a tail past the head is then only a crash's).
        `charges()` gives the spends that count."""
        with self._exclusive(shared=True):
            return [json.loads(line) for line in self._read()[1:]]

    def charges(self) -> list[dict]:
        """The spends that count, oldest first: every spend that no refund names."""
        with self._exclusive(shared=True):
            return _charges(self._read())

    def total(self, extra: Guarantee | None = None) -> Composed:
        guarantees = [Guarantee.from_json(entry["guarantee"]) for entry in self.charges()]
        return compose(guarantees + ([extra] if extra is not None else []))

    @contextmanager
    def _exclusive(self, shared: bool = False):
        """The ledger's lock (a file beside it): exclusive for a writer, shared for a reader."""
        lock_path = str(self.path) + ".lock"
        with self._lock:
            handle: int | None = None
            try:
                handle = os.open(lock_path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
            except OSError as error:
                # A reader that cannot make the lock file (a read-only copy, a missing ledger) reads without it:
                # nothing can append there, and reading the head first still never shows a head past the file.
                if not shared and isinstance(error, FileNotFoundError):
                    raise LedgerError(f"the privacy ledger's directory {self.path.parent} is missing") from None
                if not shared:  # e.g. no room for the lock file's entry on a full disk
                    raise self._unwritable(error, charged=False) from None
            try:
                if handle is not None:
                    fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
                yield
            finally:
                if handle is not None:
                    os.close(handle)  # releases the lock

    def _within_budget(self, lines: list[bytes], guarantee: Guarantee) -> Composed | None:
        """The total with `guarantee` if the budget allows it (None when unlimited: nothing to compose),
        else BudgetExceeded with the reason (for the party's own log only)."""
        if self.budget.unlimited:
            return None
        key = (_line_digest(lines[-1]), json.dumps(guarantee.to_json(), sort_keys=True))
        if self._checked is not None and self._checked[:2] == key:
            return self._checked[2]
        earlier = [Guarantee.from_json(entry["guarantee"]) for entry in _charges(lines)]
        total = compose([*earlier, guarantee])
        if not self.budget.allows(total):
            raise BudgetExceeded(f"spent {describe(compose(earlier))}, this session asks {describe(guarantee)} "
                                 f"({guarantee.mechanism}); together {describe(total)} > the budget {self.budget}")
        self._checked = (*key, total)
        return total

    def check(self, guarantee: Guarantee) -> Composed | None:
        """Would `guarantee` fit? Before any computation; records nothing."""
        with self._exclusive():
            return self._within_budget(self._read(), guarantee)

    def spend(self, session: str, protocol: str, guarantee: Guarantee) -> Composed | None:
        """Append `guarantee` durably, or raise BudgetExceeded and record nothing. Returns the total with it when
        the budget is finite (it had to be computed), else None."""
        with self._exclusive():
            lines = self._read(roll_back=True)
            total = self._within_budget(lines, guarantee)
            line = _line({
                "prev": _line_digest(lines[-1]),
                "session": session,
                "protocol": protocol,
                "time": _now(),
                "data_sha256": _sha256(self.data_file),
                "guarantee": guarantee.to_json(),
                "budget": self.budget.to_json(),
            })
            self._append(sum(map(len, lines)), line, _line({"lines": len(lines) + 1, "sha256": _line_digest(line)}))
            return total

    def refund(self, session: str, protocol: str, reason: str) -> None:
        """Cancel the session's spend with a refund line (the module's docstring), durably, or raise LedgerError
        (LedgerUnwritable when the disk failed: then the spend stays, and counts)."""
        with self._exclusive():
            lines = self._read(roll_back=True)
            refunded = {json.loads(line).get("refund") for line in lines[1:]}
            spend = next((line for line in reversed(lines[1:]) if _is_spend_of(line, session, protocol)), None)
            if spend is None or _line_digest(spend) in refunded:
                raise LedgerError(f"the privacy ledger {self.path} holds no {protocol} spend of session {session} "
                                  "to refund")
            line = _line({"prev": _line_digest(lines[-1]), "refund": _line_digest(spend), "session": session,
                          "protocol": protocol, "time": _now(), "reason": reason})
            self._append(sum(map(len, lines)), line, _line({"lines": len(lines) + 1, "sha256": _line_digest(line)}))

    def _append(self, length: int, line: bytes, head: bytes) -> None:
        """`line` after the first `length` bytes, then `head`: all or nothing (the module's docstring)."""
        try:
            handle = os.open(self.path, os.O_WRONLY)
        except OSError as error:
            raise self._unwritable(error, charged=False) from None
        try:
            try:
                os.lseek(handle, length, os.SEEK_SET)
                _write_all(handle, line, self.disk)
                self.disk.fsync(handle)
                staged = _staged(self.head, head, self.disk)
                try:
                    self.disk.replace(staged, self.head)  # the commit point
                except BaseException:
                    staged.unlink(missing_ok=True)
                    raise
            except OSError as error:
                self._truncate(handle, length)
                raise self._unwritable(error, charged=False) from None
        finally:
            os.close(handle)
        try:
            _fsync_directory(self.path.parent, self.disk)
        except OSError as error:
            raise self._unwritable(error, charged=True) from None

    def _truncate(self, handle: int, length: int) -> None:
        """Back to `length` bytes; if even that fails, the tail is an unacknowledged one for the next writer."""
        try:
            self.disk.ftruncate(handle, length)
            self.disk.fsync(handle)
        except OSError as error:
            log.warning("privacy ledger %s: cannot truncate a failed append yet (%s); the next append or start "
                        "rolls it back", self.path, error)

    def _unwritable(self, error: OSError, charged: bool) -> LedgerUnwritable:
        what = ("the entry is recorded but its directory could not be synced" if charged
                else "nothing was recorded")
        return LedgerUnwritable(f"cannot append to the privacy ledger {self.path} ({error.strerror or error}); "
                                f"{what}", error.errno, charged)


def _charges(lines: list[bytes]) -> list[dict]:
    """The spends that count among a checked ledger's lines (the header first): every spend no refund names."""
    refunded = {json.loads(line).get("refund") for line in lines[1:]}
    return [record for line in lines[1:] if "refund" not in (record := json.loads(line))
            and _line_digest(line) not in refunded]

def _is_spend_of(line: bytes, session: str, protocol: str) -> bool:
    record = json.loads(line)
    return "refund" not in record and record.get("session") == session and record.get("protocol") == protocol
