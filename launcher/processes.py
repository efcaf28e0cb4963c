"""`mpdp up` / `mpdp down`: every role as its own OS process on loopback, or
attached to a topology that names addresses elsewhere."""

from __future__ import annotations

import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cryptocore import keyfiles
from launcher import certs
from launcher.errors import StartupError
from launcher.health import is_serving
from launcher.keygen import ceremony
from launcher.progress import progress
from learning import datasets
from privacy.ledger import Budget
from sessions.identity import AGGREGATOR, CLIENT, CURATOR, Identity, party
from wire.identity import Principal
from wire.topology import RoleEntry, Topology

PROCESSES_FILE = "processes.json"
TOPOLOGY_FILE = "topology.toml"
CLIENT_DATA_FILE = "client.npz"
AUX_DATA_FILE = "curator_aux.npz"
STARTUP_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class RunDirectory:
    path: Path

    def __post_init__(self):
        # Children start in another directory: every path they are given must be absolute.
        object.__setattr__(self, "path", Path(self.path).expanduser().resolve())

    @property
    def topology(self) -> Path:
        return self.path / TOPOLOGY_FILE

    @property
    def client_data(self) -> Path:
        return self.path / "data" / CLIENT_DATA_FILE

    @property
    def aux_data(self) -> Path:
        """Charlie's public auxiliary rows (Hamm's X_aux), unlabeled."""
        return self.path / "data" / AUX_DATA_FILE

    @property
    def processes(self) -> Path:
        return self.path / PROCESSES_FILE

    def log_file(self, identity: Identity) -> Path:
        return self.path / "logs" / f"{identity.role}_{identity.id}.log"


def _ephemeral_ports() -> range:
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    return range(low, high + 1)


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on, chosen outside the kernel's ephemeral range: a port from that range can be
    taken by some outgoing connection between this probe and the server's bind."""
    ephemeral = _ephemeral_ports()
    rng = random.SystemRandom()
    for _ in range(100):
        port = rng.randrange(20000, 65536)
        if port in ephemeral:
            continue
        with socket.socket() as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
            return port
    with socket.socket() as probe:  # a crowded machine: let the kernel choose
        probe.bind((host, 0))
        return probe.getsockname()[1]


def prepare_data(run: RunDirectory, dataset: datasets.Dataset, parties: int, seed: int | None,
                 split_kind: str = "even", aux_fraction: float | None = None) -> list[Path]:
    """Split the data set: one private file per party, the public rows (unlabeled) for Charlie's X_aux,
    and the public/test part for the client."""
    if seed is None:  # still reproducible: the seed drawn is recorded with the split
        seed = secrets.randbits(32)
    rng = np.random.default_rng(seed)
    split = datasets.split_for_teachers(dataset, parties, rng, split=split_kind, aux_fraction=aux_fraction)
    data_dir = run.path / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, (features, labels) in enumerate(split.teacher_parts, start=1):
        path = data_dir / f"party_{number}.npz"
        datasets.save_part(path, features, labels, dataset.classes)
        paths.append(path)
    datasets.save_public(run.aux_data, split.public_features)
    np.savez(run.client_data, public_features=split.public_features, public_labels=split.public_labels,
             test_features=split.test_features, test_labels=split.test_labels, classes=dataset.classes,
             dataset=dataset.name, source=dataset.source, split=split_kind, split_seed=seed,
             class_names=np.array(dataset.class_names, dtype=str), intercept=dataset.intercept,
             scaling=json.dumps({k: v for k, v in dataset.scaling.items() if k != "schema_document"}),
             aux_fraction=np.nan if aux_fraction is None else aux_fraction,
             party_sizes=np.array([len(labels) for _, labels in split.teacher_parts]))
    return paths


def party_hosts(parties: int, per_process: int = 1) -> dict[Identity, Principal]:
    """Parties 1..K in consecutive groups of `per_process`, one process (principal) per group."""
    if per_process < 1:
        raise ValueError("--parties-per-process must be at least 1")
    hosts = {}
    for first in range(1, parties + 1, per_process):
        principal = Principal("party", first, min(parties, first + per_process - 1))
        hosts.update({identity: principal for identity in principal.identities})
    return hosts


def write_topology(run: RunDirectory, addresses: dict[Identity, str], data_files: list[Path], holders: int,
                   model: str | None = None, insecure: bool = False, listen_host: str | None = None,
                   overwrite: bool = False, hosts: dict[Identity, Principal] | None = None) -> Topology:
    """The topology of a prepared run directory; with mutual TLS (certificates issued here) unless `insecure`.
    `hosts` groups parties into processes (default: one process per party)."""
    cert_dir = run.path / "certs"
    principals = {identity: (hosts or {}).get(identity) or Principal.of(identity) for identity in addresses}
    if not insecure:
        certs.issue(cert_dir, sorted(set(principals.values())) + [Principal.of(CLIENT)], overwrite=overwrite)

    def entry(identity: Identity, **files: Any) -> RoleEntry:
        listen = f"{listen_host}:{addresses[identity].rsplit(':', 1)[1]}" if listen_host else None
        principal = principals[identity]
        tls: dict[str, Any] = {} if insecure else dict(zip(("certificate", "key"),
                                                            certs.certificate_files(cert_dir, principal)))
        host = str(principal) if principal.single is None else None
        return RoleEntry(identity, addresses[identity], listen=listen, host=host, **files, **tls)

    aux = {"data": run.aux_data} if run.aux_data.exists() else {}
    roles = [entry(AGGREGATOR), entry(CURATOR, **aux)]
    chosen = model_names(model)
    for number, data in enumerate(data_files, start=1):
        key_share = run.path / "keys" / keyfiles.share_file_name(number) if number <= holders else None
        roles.append(entry(party(number), key_share=key_share, data=data,
                           model=chosen[(number - 1) % len(chosen)] if chosen else None))
    client_files = {} if insecure else dict(zip(("client_certificate", "client_key"),
                                                  certs.certificate_files(cert_dir, CLIENT)))
    topology = Topology(public_key=run.path / "keys" / keyfiles.PUBLIC_KEY_FILE, roles=tuple(roles),
                        ca_certificate=None if insecure else cert_dir / certs.CA_FILE, insecure=insecure,
                        **client_files)
    topology.dump(run.topology)
    return topology


def model_names(model: str | None) -> list[str]:
    """`--model a,b,…`: the parties' local models, assigned round-robin (checked before any work)."""
    from learning.models import MODELS

    names = [name.strip() for name in model.split(",")] if model else []
    unknown = [name for name in names if name not in MODELS]
    if unknown:
        raise ValueError(f"unknown model {unknown[0]!r}; choose from {', '.join(MODELS)}")
    return names


def loopback_addresses(parties: int, hosts: dict[Identity, Principal] | None = None) -> dict[Identity, str]:
    """A free port per process: parties of one host share its address."""
    identities = [AGGREGATOR, CURATOR] + [party(number) for number in range(1, parties + 1)]
    ports: dict[Principal, str] = {}
    return {identity: ports.setdefault((hosts or {}).get(identity) or Principal.of(identity),
                                       f"127.0.0.1:{free_port()}") for identity in identities}


def prepare(run_dir: Path, parties: int, bits: int, dataset: datasets.Dataset, addresses: dict[Identity, str],
            seed: int | None = None, model: str | None = None, threshold: int | None = None, split: str = "even",
            insecure: bool = False, listen_host: str | None = None, overwrite: bool = False,
            hosts: dict[Identity, Principal] | None = None, aux_fraction: float | None = None) -> Topology:
    """Key ceremony, certificates, one data file per party and the topology: everything a deployment needs.
    Existing keys and certificates are replaced only if `overwrite`."""
    run = RunDirectory(Path(run_dir))
    run.path.mkdir(parents=True, exist_ok=True)
    model_names(model)  # a mistake fails before the key ceremony, as does a split that cannot work
    data_files = prepare_data(run, dataset, parties, seed, split, aux_fraction)
    _, _, holders = ceremony(parties, run.path / "keys", bits, threshold, overwrite=overwrite)
    return write_topology(run, addresses, data_files, holders, model, insecure, listen_host, overwrite, hosts)


def _running(pid: int) -> bool:
    """Whether `pid` runs; a child of ours that exited (a zombie until reaped) is reaped and counts as dead."""
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)
        if reaped == pid:
            return False
    except ChildProcessError:  # not our child: ask the kernel
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wait_healthy(topology: Topology, processes: dict[str, int] | None = None, timeout: float = STARTUP_TIMEOUT_S,
                 run: RunDirectory | None = None, only: Identity | None = None) -> None:
    """Block until every role's (or only `only`'s) health service says SERVING; a role that exits while
    starting fails at once with the last lines of its log. Progress every few seconds."""
    started = time.monotonic()
    entries = topology.host_entries if only is None else [topology.entry(topology.principal_of(only).identities[0])]
    waiting = list(entries)
    last_report = started
    while waiting:
        for entry in list(waiting):
            pid = (processes or {}).get(str(entry.identity))
            if pid is not None and not _running(pid):
                raise StartupError(f"{entry.identity} exited during start-up; the end of its log:\n"
                                   + _log_tail(run, entry.identity))
            if is_serving(topology, entry.identity, timeout=1.0):
                waiting.remove(entry)
        if not waiting:
            return
        now = time.monotonic()
        if now - started > timeout:
            names = ", ".join(f"{e.identity} at {e.address}" for e in waiting)
            raise StartupError(f"not serving after {timeout:.0f} s: {names} (--startup-timeout raises the limit)")
        if now - last_report >= 5:
            progress(f"{len(entries) - len(waiting)}/{len(entries)} roles serving after {now - started:.0f} s; "
                     f"waiting for {', '.join(str(e.identity) for e in waiting)}")
            last_report = now
        time.sleep(0.2)


def _log_tail(run: RunDirectory | None, identity: Identity, lines: int = 15) -> str:
    if run is None or not run.log_file(identity).exists():
        return "  (no log)"
    return "\n".join("  " + line for line in run.log_file(identity).read_text(errors="replace").splitlines()[-lines:])


def serve_command(topology_path: Path, identity: Identity, insecure: bool) -> list[str]:
    command = ["mpdp", "serve", identity.role, "--topology", str(topology_path), "--id", str(identity.id)]
    return command + ["--insecure"] if insecure else command


def _spawn(run: RunDirectory, identity: Identity, insecure: bool, test_mode: bool, fault: str | None,
           budget: Budget | None = None) -> int:
    command = [sys.executable, "-m", "launcher.cli", *serve_command(run.topology, identity, insecure)[1:]]
    if budget is not None and identity.role == "party":
        command += ["--budget", f"{budget.epsilon!r},{budget.delta!r}"]
    if test_mode and (identity.role in ("party", "curator") or fault):  # those that draw (noise, Hamm's η)
        command.append("--test-mode")
    if test_mode and fault:
        command += ["--fault", fault]
    with run.log_file(identity).open("a") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, cwd=Path(__file__).resolve().parent.parent)
    return process.pid


def start_processes(run: RunDirectory, topology: Topology, test_mode: bool = False,
                    faults: dict[int, str] | None = None, budget: Budget | None = None) -> dict[str, int]:
    (run.path / "logs").mkdir(parents=True, exist_ok=True)
    processes = {str(entry.identity): _spawn(run, entry.identity, topology.insecure, test_mode,
                                             (faults or {}).get(entry.identity.id), budget)
                 for entry in topology.host_entries}
    run.processes.write_text(json.dumps(processes, indent=2))
    return processes


def restart(run_dir: Path, identity: Identity, test_mode: bool = False, fault: str | None = None,
            budget: Budget | None = None) -> None:
    """Start one role again (after it died or was stopped), with `fault` (test mode) or none, and wait until it
    serves. A copy that still runs is stopped first."""
    run = RunDirectory(Path(run_dir))
    processes = json.loads(run.processes.read_text())
    topology = Topology.load(run.topology)
    identity = topology.principal_of(identity).identities[0]  # the process of its host
    old = processes.get(str(identity))
    if old is not None and _running(old):
        stop({str(identity): old})
    processes[str(identity)] = _spawn(run, identity, topology.insecure, test_mode, fault, budget)
    run.processes.write_text(json.dumps(processes, indent=2))
    wait_healthy(topology, {str(identity): processes[str(identity)]}, run=run, only=identity)


def up(run_dir: Path, parties: int, bits: int, dataset: datasets.Dataset, seed: int | None = None,
       model: str | None = None, test_mode: bool = False, faults: dict[int, str] | None = None,
       threshold: int | None = None, split: str = "even", insecure: bool = False,
       startup_timeout: float = STARTUP_TIMEOUT_S, parties_per_process: int = 1,
       aux_fraction: float | None = None, budget: Budget | None = None) -> Topology:
    run = RunDirectory(Path(run_dir))
    if run.processes.exists() and any(_running(pid) for pid in json.loads(run.processes.read_text()).values()):
        raise StartupError(f"{run.path} already has running processes; run `mpdp down --run-dir {run.path}` first")
    # `up` always makes a fresh deployment: its keys replace a stopped run's (atomically, mode 0600).
    hosts = party_hosts(parties, parties_per_process)
    topology = prepare(run.path, parties, bits, dataset, loopback_addresses(parties, hosts), seed, model, threshold,
                       split, insecure, overwrite=True, hosts=hosts, aux_fraction=aux_fraction)
    processes = start_processes(run, topology, test_mode, faults, budget)
    try:
        wait_healthy(topology, processes, timeout=startup_timeout, run=run)
    except BaseException:
        down(run.path)
        raise
    return topology


def running_servers() -> dict[str, int]:
    """Every mpdp role server on this machine (found through /proc, so even one whose run directory is gone):
    its command line → pid."""
    servers = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode(errors="replace") for a in args if a]
        if "serve" in words and any(w == "launcher.cli" or w.endswith("/mpdp") or w == "mpdp" for w in words):
            servers[" ".join(words[words.index("serve"):])] = int(entry.name)
    return servers


def stop(processes: dict[str, int]) -> list[str]:
    """SIGTERM each process group; SIGKILL what is left after a grace period."""
    for pid in processes.values():
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        except PermissionError:
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline and any(_running(pid) for pid in processes.values()):
        _reap(processes.values())
        time.sleep(0.1)
    for pid in processes.values():
        if _running(pid):
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    _reap(processes.values())
    return list(processes)


def down(run_dir: Path) -> list[str]:
    """SIGTERM every process this run directory started; SIGKILL what is left after a grace period."""
    run = RunDirectory(Path(run_dir))
    if not run.processes.exists():
        return []
    processes = json.loads(run.processes.read_text())
    stopped = stop(processes)
    run.processes.unlink()
    return stopped


def _reap(pids) -> None:
    """Collect exited children of this process so they do not linger as zombies."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
