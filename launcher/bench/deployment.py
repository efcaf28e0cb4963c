"""What the protocol benchmarks share: a throw-away deployment of real role processes, and each process's
CPU time and peak memory read from /proc (so a figure says which role spent it)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from launcher.common import client
from launcher.deployment import processes
from mpdp.deployments.topology import Topology
from mpdp.learning import datasets
from mpdp.privacy.ledger import UNLIMITED


def synthetic_dataset(classes: int, rows: int, seed: int) -> datasets.Dataset:
    """C well-separated classes (scikit-learn's make_classification), scaled into the unit ball."""
    from sklearn.datasets import make_classification

    features, labels = make_classification(n_samples=rows, n_features=16, n_informative=10, n_classes=classes,
                                           n_clusters_per_class=1, class_sep=2.0, random_state=seed)
    return datasets.Dataset(f"synthetic-{classes}-classes", datasets.into_unit_ball(features), labels,
                            tuple(str(c) for c in range(classes)), "scikit-learn make_classification")


@dataclass
class Deployment:
    run: processes.RunDirectory
    topology: Topology
    client_data: dict

    def pids(self) -> dict[str, int]:
        return {name: int(pid) for name, pid in json.loads(self.run.processes.read_text()).items()}


@contextlib.contextmanager
def deployment(parties: int, bits: int, dataset: datasets.Dataset, seed: int = 1, **up_options) -> Iterator[Deployment]:
    """Started on loopback in a temporary directory, always stopped (and the directory removed) on exit."""
    with tempfile.TemporaryDirectory(prefix="mpdp-bench-") as scratch:
        run_dir = Path(scratch) / "run"
        up_options.setdefault("budget", UNLIMITED)  # a benchmark repeats sessions on a throw-away deployment
        topology = processes.up(run_dir, parties, bits, dataset, seed=seed, **up_options)
        try:
            run = processes.RunDirectory(run_dir)
            yield Deployment(run, topology, client.load_client_data(run.client_data))
        finally:
            processes.down(run_dir)


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def descendants(pid: int) -> list[int]:
    """The live processes `pid` started, and theirs."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                children.setdefault(int(_stat(int(entry.name))[1]), []).append(int(entry.name))
            except (OSError, IndexError):
                continue  # gone meanwhile
    found, todo = [], list(children.get(pid, []))
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process and of everything it started: its reaped children, and its
    live descendants with theirs."""
    ticks = 0
    for current in (pid, *descendants(pid)):
        try:
            fields = _stat(current)
        except OSError:
            continue
        ticks += sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def _status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb(pid: int) -> float:
    """VmHWM: the process's peak resident memory so far."""
    return _status_mb(pid, "VmHWM")


def resident_mb(pid: int) -> float:
    """VmRSS: the process's resident memory now."""
    return _status_mb(pid, "VmRSS")


class CpuMeter:
    """CPU seconds each role process spent between `start` and `stop`."""

    def __init__(self, pids: dict[str, int]):
        self.pids = pids
        self._started: dict[str, float] = {}

    def start(self) -> None:
        self._started = {name: cpu_seconds(pid) for name, pid in self.pids.items()}

    def stop(self) -> dict[str, float]:
        return {name: cpu_seconds(pid) - self._started[name] for name, pid in self.pids.items()}


def wait_until_idle(meter: CpuMeter, quiet_cpu_s: float = 0.03, interval_s: float = 0.3,
                    limit_s: float = 120.0) -> tuple[float, float]:
    """Wait until the meter's processes together use less than `quiet_cpu_s` in `interval_s` (their idle-time
    work done); returns (seconds waited, CPU seconds spent meanwhile)."""
    started = time.perf_counter()
    meter.start()
    total = 0.0
    while time.perf_counter() - started < limit_s:
        time.sleep(interval_s)
        now = sum(meter.stop().values())
        if now - total < quiet_cpu_s:
            break
        total = now
    return time.perf_counter() - started, sum(meter.stop().values())


def by_role(per_process: dict[str, float]) -> dict[str, float]:
    """Summed over the processes of each role (aggregator/0, party/1, … → aggregator, party)."""
    totals: dict[str, float] = {}
    for name, value in per_process.items():
        role = name.split("/")[0]
        totals[role] = totals.get(role, 0.0) + value
    return totals
