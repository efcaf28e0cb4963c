"""A party's privacy ledger: what it has spent on one data set, kept in a small file next to the data.

Spend first, release after: `spend` refuses a session that would take the composed total over the budget,
and otherwise writes the entry durably (temporary file, fsync, atomic rename, fsync of the directory) before
it returns, so a crash between the spend and the release over-counts and never under-counts. The ledger is
per data file: editing the data does not reset it (the records already spent are still in it); the file's
SHA-256 at each spend is recorded for reference.
"""

from __future__ import annotations

import datetime
import fcntl
import hashlib
import json
import math
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from privacy.composition import Composed, Guarantee, compose

FORMAT = "mpdp-privacy-ledger/1"
SUFFIX = ".privacy-ledger.json"
MAX_LEDGER_BYTES = 16 * 1024 * 1024  # a larger file is not one we wrote


class BudgetExceeded(Exception):
    pass


class LedgerError(ValueError):
    """The ledger cannot be read or written: no session may spend until that is fixed."""


@dataclass(frozen=True)
class Budget:
    epsilon: float
    delta: float

    @classmethod
    def parse(cls, text: str) -> "Budget":
        """`ε,δ`, e.g. `4,1e-5`."""
        parts = text.split(",")
        try:
            epsilon, delta = (float(part) for part in parts)
        except ValueError:
            raise ValueError(f"a budget is `ε,δ` (e.g. `4,1e-5`), not {text!r}") from None
        if not (math.isfinite(epsilon) and epsilon > 0 and 0 <= delta < 1):
            raise ValueError(f"a budget needs ε > 0 and 0 ≤ δ < 1, not {text!r}")
        return cls(epsilon, delta)

    def allows(self, total: Composed) -> bool:
        return (total.epsilon is not None and total.epsilon <= self.epsilon * (1 + 1e-12)
                and total.delta <= self.delta * (1 + 1e-12))

    def __str__(self) -> str:
        return f"ε = {self.epsilon:g}, δ = {self.delta:g}"


def ledger_path(data_file: Path) -> Path:
    return Path(str(data_file) + SUFFIX)


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


def describe(total: Composed | Guarantee) -> str:
    epsilon = "unbounded" if total.epsilon is None else f"{total.epsilon:.4g}"
    return f"ε = {epsilon}, δ = {total.delta:.3g}"


class Ledger:
    def __init__(self, data_file: Path, budget: Budget | None = None):
        self.data_file = Path(data_file)
        self.path = ledger_path(self.data_file)
        self.budget = budget
        self._lock = threading.Lock()

    def check_writable(self) -> None:
        """At start-up: a party that cannot record its spending must not serve."""
        directory = self.path.parent
        if not os.access(directory, os.W_OK):
            raise LedgerError(f"cannot write the privacy ledger {self.path}: its directory is not writable")
        self.entries()  # a corrupt ledger fails now, not in the first session

    def entries(self) -> list[dict]:
        if not self.path.exists():
            return []
        if self.path.stat().st_size > MAX_LEDGER_BYTES:
            raise LedgerError(f"{self.path} is larger than a ledger can be")
        try:
            content = json.loads(self.path.read_text())
            if content.get("format") != FORMAT:
                raise ValueError("unknown format")
            for entry in content["entries"]:
                Guarantee.from_json(entry["guarantee"])
            return list(content["entries"])
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise LedgerError(f"the privacy ledger {self.path} is unreadable ({error}); it is never reset "
                              "automatically: restore it or move it away deliberately") from None

    def total(self, extra: Guarantee | None = None) -> Composed:
        guarantees = [Guarantee.from_json(entry["guarantee"]) for entry in self.entries()]
        return compose(guarantees + ([extra] if extra is not None else []))

    @contextmanager
    def _exclusive(self):
        with self._lock, open(str(self.path) + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def spend(self, session: str, protocol: str, guarantee: Guarantee) -> Composed | None:
        """Record `guarantee` durably, or raise BudgetExceeded and record nothing. Returns the new total when a
        budget is set (it had to be computed), else None."""
        with self._exclusive():
            entries = self.entries()
            total = None
            if self.budget is not None:
                earlier = [Guarantee.from_json(entry["guarantee"]) for entry in entries]
                total = compose([*earlier, guarantee])
                if not self.budget.allows(total):
                    spent = compose(earlier)  # only for the message
                    raise BudgetExceeded(
                        f"privacy budget of {self.data_file.name} exhausted: spent {describe(spent)}, this session "
                        f"asks {describe(guarantee)} ({guarantee.mechanism}); together {describe(total)} "
                        f"> the budget {self.budget}")
            entries.append({
                "session": session,
                "protocol": protocol,
                "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "data_sha256": _sha256(self.data_file),
                "guarantee": guarantee.to_json(),
                "budget": None if self.budget is None else [self.budget.epsilon, self.budget.delta],
            })
            self._write({"format": FORMAT, "data_file": self.data_file.name,
                         "unit": "one record of this data set (replacement); a party-unit guarantee implies it",
                         "entries": entries})
            return total

    def _write(self, content: dict) -> None:
        temporary = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        with temporary.open("w") as handle:
            json.dump(content, handle, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
