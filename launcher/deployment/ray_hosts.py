"""`mpdp up --ray [ADDRESS]`: every role host (the aggregator, Charlie, each party host) as a Ray actor.

Each actor picks a free port on its node and reports the address; the launcher then writes the deployment's
bundles for those addresses (launcher/deployment/processes.py) and hands each actor its own role's bundle only, as the
bytes of its files, through Ray. The actor writes it to a private directory on its node and starts the
role's real gRPC server (`mpdp serve`, mutual TLS) from it, as a child that dies with the actor: an actor
killed is a killed process. Sessions, reports and traffic do not go through Ray; the client speaks gRPC
to the addresses the actors reported, as with local processes. With `--keygen distributed` the key holders
generate the key among themselves inside their actors before the bundles are handed over (ray_keygen): each
share is written only in its actor's directory, and the launcher's bundles carry the public key alone.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launcher.common.errors import StartupError
from launcher.deployment import bundles, ray_keygen
from launcher.deployment.processes import RunDirectory, wait_healthy
from launcher.deployment.ray_keygen import HolderProcesses
from mpdp.platform.lifetime import die_with_parent
from mpdp.wire.identity import Principal

CODE_ROOT = Path(__file__).resolve().parents[2]  # the checkout: launcher/, mpdp/, the role folders
RAY_FILE = "ray.json"  # the run directory's record of its cluster and actors (what `down` and `ps` read)
INSTALL_HINT = "--ray needs Ray: pip install -e '.[ray]'"
TOPOLOGY_MARK = "{topology}"  # stands for the bundle's topology file in the serve arguments an actor gets
HEAD_ATTEMPTS = 3
# A raylet gives its agents 30 s to register and workers 60 s by default: too little on a loaded machine.
PATIENT_RAY = {"RAY_agent_register_timeout_ms": "600000", "RAY_worker_register_timeout_seconds": "600"}
DEFAULT_HOST_CPUS = 0.05  # a role host waits on the network most of the time; logical CPUs Ray reserves
DEFAULT_HOST_MEMORY_MB = 256
# Not uploaded to the cluster's nodes with the code: history, documentation, caches, data.
UPLOAD_EXCLUDES = [".git", ".git/**", "docs/**", "tests/**", "**/__pycache__/**", ".mypy_cache/**",
                   ".pytest_cache/**", ".ruff_cache/**", "**/*.npz", "mutants/**"]
# Nor, wherever a bundle or key directory lies under the code's, what it keeps secret: key shares, TLS keys,
# topologies and privacy ledgers. Every actor gets the whole upload; a role gets its own bundle through `start`.
SECRET_EXCLUDES = ["**/key_share_*", "**/*.key", "**/topology.toml", "**/*.jsonl", "**/*.jsonl.head", "**/*.pem"]


class RayMissing(RuntimeError):
    pass


def require_ray():
    try:
        import ray
    except ImportError:
        raise RayMissing(INSTALL_HINT) from None
    return ray


@dataclass(frozen=True)
class RayRecord:
    address: str
    namespace: str
    actors: list[str]  # principal names; each actor is named after its principal
    head_temp_dir: str | None = None  # set when `up` started the cluster itself (no ADDRESS)

    def dump(self, run: RunDirectory) -> None:
        with bundles.private_umask():
            (run.path / RAY_FILE).write_text(json.dumps(self.__dict__, indent=2))

    @classmethod
    def load(cls, run: RunDirectory) -> RayRecord | None:
        path = run.path / RAY_FILE
        return cls(**json.loads(path.read_text())) if path.exists() else None


class RoleHostActor:
    """One role host on a Ray node (a Ray actor class once `ray.remote` wraps it)."""

    def __init__(self, principal: str):
        self.principal = principal
        self.directory: Path | None = None
        self.process: subprocess.Popen | None = None
        self.address: str | None = None
        self.holders: HolderProcesses | None = None

    def reserve_address(self) -> str:
        """A free port on this actor's node: the address peers will dial. Also makes the actor's private directory
        on its node (0700; never the launcher's run directory), which the key ceremony and the bundle share."""
        import ray

        from launcher.deployment.children import free_port

        host = ray.util.get_node_ip_address()
        self.address = f"{host}:{free_port(host)}"
        with bundles.private_umask():
            self.directory = Path(tempfile.mkdtemp(prefix="mpdp-role-"))
        return self.address

    def reserve_holders(self, numbers: list[int]) -> dict[int, str]:
        """One free port on this node for each key holder this actor hosts, for the key ceremony (ray_keygen)."""
        import ray

        from launcher.deployment.children import free_ports

        host = ray.util.get_node_ip_address()
        return {number: f"{host}:{port}" for number, port in zip(numbers, free_ports(len(numbers), host))}

    def start_holders(self, files: dict[str, bytes], numbers: list[int]) -> dict[int, int]:
        assert self.directory is not None, "reserve_address first"
        self.holders = HolderProcesses(self.directory, CODE_ROOT)
        return self.holders.start(files, numbers)

    def holders_exited(self) -> dict[int, str]:
        return {} if self.holders is None else self.holders.exited()

    def finish_holders(self, public_key: bytes) -> list[str]:
        """The committed shares moved into this actor's bundle directory; their file names (never their content)."""
        assert self.holders is not None
        return self.holders.finish(public_key)

    def abort_holders(self) -> None:
        if self.holders is not None:
            self.holders.stop()
            self.holders.remove()

    def start(self, files: dict[str, bytes], arguments: list[str]) -> int:
        """Write this role's bundle (and nothing else) to its private directory and start its server from it."""
        if self.process is not None:
            raise RuntimeError(f"{self.principal} already started")
        with bundles.private_umask():
            if self.directory is None:
                self.directory = Path(tempfile.mkdtemp(prefix="mpdp-role-"))
            for name, content in files.items():
                path = (self.directory / name).resolve()
                if not path.is_relative_to(self.directory) or "/" in name:
                    raise ValueError(f"bundle file {name!r} leaves the bundle")
                fd = bundles.open_private(path, append=False)
                with os.fdopen(fd, "wb") as out:
                    out.write(content)
            log = bundles.open_private(self.directory / "role.log")
        root = CODE_ROOT  # the code Ray placed on this node
        command = [sys.executable, "-m", "launcher.cli",
                   *[str(self.directory / bundles.TOPOLOGY_FILE) if a == TOPOLOGY_MARK else a for a in arguments]]
        try:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            cwd=root, preexec_fn=_die_with_actor)
        finally:
            os.close(log)
        return self.process.pid

    def describe(self) -> dict[str, Any]:
        """Where the host runs and its server's memory (kB; peak is the kernel's high-water mark)."""
        import ray

        status = {"principal": self.principal, "address": self.address, "node": ray.util.get_node_ip_address(),
                  "node_id": ray.get_runtime_context().get_node_id(),
                  "pid": None if self.process is None else self.process.pid, "actor_pid": os.getpid(),
                  "bundle": None if self.directory is None else str(self.directory), "running": False,
                  "holder_pids": [] if self.holders is None else [p.pid for p in self.holders.processes.values()]}
        if self.process is not None and self.process.poll() is None:
            status["running"] = True
            try:
                fields = dict(line.split(":", 1) for line in Path(f"/proc/{self.process.pid}/status").read_text()
                              .splitlines() if ":" in line)
                status["state"] = fields["State"].split()[0]  # R, S, T (stopped) …
                status["rss_kb"] = int(fields["VmRSS"].split()[0])
                status["peak_kb"] = int(fields["VmHWM"].split()[0])
            except (OSError, KeyError, ValueError):
                pass
        return status

    def ledgers(self) -> list[dict[str, Any]]:
        """The privacy ledgers of this host's parties (`mpdp budget`'s rows), read where its server writes them:
        next to its data, in the private directory on this node (the launcher's copy of the bundle spends nothing)."""
        from launcher.common.ledger_rows import ledgers

        if self.directory is None:
            return []
        return ledgers(self.directory / bundles.TOPOLOGY_FILE)

    def log_tail(self, lines: int = 15) -> str:
        if self.directory is None or not (self.directory / "role.log").exists():
            return "  (no log)"
        text = (self.directory / "role.log").read_text(errors="replace").splitlines()[-lines:]
        return "\n".join("  " + line for line in text)

    def stop(self) -> None:
        """SIGTERM the server, SIGKILL after a grace period, and remove the bundle from this node."""
        if self.holders is not None:
            self.holders.stop()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


def _die_with_actor() -> None:
    """In the server's child before exec: killed with the actor's process, as a killed host is."""
    die_with_parent(signal.SIGKILL)


def _connect(address: str | None, run: RunDirectory) -> tuple[str, str | None]:
    """The cluster's address, starting a local one (a head node of this machine's CPUs) if none is given."""
    if address:
        return address, None
    for attempt in range(HEAD_ATTEMPTS):  # Ray gives a starting node 30 s to register: a loaded machine can miss it
        temp_dir = tempfile.mkdtemp(prefix="mpdp-ray-")  # short: Ray's socket paths must fit 107 bytes
        port = _free_port()
        # Ray's client server would take the machine-wide default port 10001 (another cluster's, or a later one's)
        started = subprocess.run([_ray_command(), "start", "--head", f"--port={port}", f"--temp-dir={temp_dir}",
                                  f"--ray-client-server-port={_free_port()}", "--include-dashboard=false",
                                  "--disable-usage-stats", f"--num-cpus={os.cpu_count() or 1}"],
                                 capture_output=True, text=True, env={**os.environ, **PATIENT_RAY})
        if started.returncode == 0:
            break
        _stop_head(temp_dir, _gcs_address(port))  # what it started before failing
        if attempt == HEAD_ATTEMPTS - 1:
            raise StartupError(f"`ray start --head` failed {HEAD_ATTEMPTS} times; the last:\n{started.stderr[-2000:]}")
    return _gcs_address(port), temp_dir


def _gcs_address(port: int) -> str:
    """The head's address as `ray start` hands it to the processes it starts (the node's IP, not loopback)."""
    import ray

    return f"{ray.util.get_node_ip_address()}:{port}"


def _ray_command() -> str:
    """The `ray` script of this interpreter's installation (the one `import ray` found), else the PATH's."""
    beside = Path(sys.executable).parent / "ray"
    return str(beside) if beside.exists() else "ray"


def _free_port() -> int:
    from launcher.deployment.children import free_port

    return free_port()


def upload_excludes(root: Path, run_dir: Path) -> list[str]:
    """What stays behind when Ray ships the code in `root` to every node: besides the usual, the run directory
    when it lies under `root` (the default `.mpdp-run` does when `up` runs from a checkout), since every actor
    would otherwise receive every role's bundle, earlier deployments' included."""
    run, root = Path(run_dir).resolve(), Path(root).resolve()
    if run == root:
        raise StartupError(f"the run directory {run} is the code's, which Ray uploads; pick another --run-dir")
    excludes = UPLOAD_EXCLUDES + SECRET_EXCLUDES
    if run.is_relative_to(root):
        excludes.append("/" + re.sub(r"([][*?!#\\])", r"\\\1", run.relative_to(root).as_posix()))
    return excludes


def _init(ray, address: str, namespace: str, run_dir: Path) -> None:
    root = CODE_ROOT
    ray.init(address=address, namespace=namespace, log_to_driver=False, logging_level="ERROR",
             runtime_env={"working_dir": str(root), "excludes": upload_excludes(root, run_dir)})


def _bundle_files(directory: Path) -> dict[str, bytes]:
    """A role's bundle as its files' bytes (its logs and subdirectories stay behind)."""
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())
            if path.is_file() and not path.name.endswith(".log")}


def up(run_dir: Path, address: str | None, parties: int, per_process: int, bits: int, dataset, seed=None,
       model=None, test_mode=False, faults=None, threshold=None, split="even", insecure=False,
       startup_timeout: float = 120.0, aux_fraction=None, budget=None, allow_unproven=False, keygen="dealer",
       host_cpus: float = DEFAULT_HOST_CPUS, host_memory_mb: int = DEFAULT_HOST_MEMORY_MB,
       single_operator: bool = False):
    """Role hosts as Ray actors spread over the cluster's nodes; returns the operator's topology."""
    from launcher.common.progress import progress
    from launcher.deployment import processes
    from launcher.deployment.keygen import DEFERRED
    from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, party
    from mpdp.threshold_sum import quorums

    ray = require_ray()
    run = RunDirectory(Path(run_dir))
    if RayRecord.load(run) is not None:
        raise StartupError(f"{run.path} already has Ray role hosts; run `mpdp down --run-dir {run.path}` first")
    hosts = processes.party_hosts(parties, per_process)
    identities = [AGGREGATOR, CURATOR] + [party(number) for number in range(1, parties + 1)]
    principals = sorted({hosts.get(identity) or Principal.of(identity) for identity in identities})
    with bundles.private_umask():
        bundles.private_directory(run.path)
    cluster, head = _connect(address, run)
    namespace = f"mpdp-{secrets.token_hex(6)}"
    record = RayRecord(cluster, namespace, [str(p) for p in principals], head)
    record.dump(run)  # from here `down` can end what was started, whatever fails next
    try:
        _init(ray, cluster, namespace, run.path)
        actor_class = ray.remote(RoleHostActor)
        actors = {p: actor_class.options(name=str(p), lifetime="detached", num_cpus=host_cpus,
                                         memory=host_memory_mb * 2**20, max_restarts=0,
                                         scheduling_strategy="SPREAD").remote(str(p)) for p in principals}
        reported = dict(zip(principals, ray.get([actors[p].reserve_address.remote() for p in principals],
                                                timeout=startup_timeout)))
        addresses = {identity: reported[hosts.get(identity) or Principal.of(identity)] for identity in identities}
        # The holders' own ceremony runs among the actors (ray_keygen): the bundles are written without a key first.
        on_actors = keygen == "distributed"
        topology = processes.prepare(run.path, parties, bits, dataset, addresses, seed, model, threshold, split,
                                     insecure, overwrite=True, hosts=hosts, aux_fraction=aux_fraction,
                                     keygen=DEFERRED if on_actors else keygen, single_operator=single_operator)
        if on_actors:
            holders = {j: hosts.get(party(j)) or Principal.of(party(j)) for j in topology.key_holders}
            colluding = 1 if single_operator else quorums.most_shares(holders.values())
            figures = ray_keygen.run(ray, actors, holders, [run.bundle(p) for p in principals]
                                     + [run.bundle(Principal.of(CLIENT))], run.path, bits,
                                     threshold or quorums.default_threshold(len(holders), colluding), startup_timeout)
            progress(f"distributed key generation among the actors: {figures['seconds']} s, "
                     f"{figures['candidates_tried']} candidates")
        started = []
        for principal in principals:
            identity = principal.identities[0]
            arguments = processes.serve_arguments(Path(TOPOLOGY_MARK), identity, insecure, test_mode,
                                                  (faults or {}).get(identity.id), budget, allow_unproven)
            started.append(actors[principal].start.remote(_bundle_files(run.bundle(principal)), arguments))
        ray.get(started, timeout=startup_timeout)
        forget_key_shares(run, principals)  # a dealt key (--keygen dealer): each actor holds its own share now
        try:
            wait_healthy(topology, timeout=startup_timeout)
        except StartupError as error:
            tails = "\n".join(f"{p}:\n{ray.get(actors[p].log_tail.remote())}" for p in principals
                              if not ray.get(actors[p].describe.remote())["running"])
            raise StartupError(f"{error}\n{tails}") from None
        return topology
    except BaseException:
        down(run.path)
        forget_key_shares(run, principals)  # of a deployment that never started: no one's to keep
        raise
    finally:
        if ray.is_initialized():
            ray.shutdown()


def forget_key_shares(run: RunDirectory, principals) -> list[Path]:
    """Remove the key shares from the launcher's copy of the role hosts' bundles: once handed to the actors,
    a share lives only in its holder's private directory on the holder's node (as with separate operators),
    and the launcher's host cannot decrypt alone."""
    removed = []
    for principal in principals:
        for path in run.bundle(principal).glob("key_share_*"):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def describe(run_dir: Path) -> list[dict[str, Any]]:
    """`mpdp ps` for a Ray deployment: each actor's node, address and memory; a missing actor as not found."""
    ray = require_ray()
    run = RunDirectory(Path(run_dir))
    record = RayRecord.load(run)
    if record is None:
        return []
    ray.init(address=record.address, namespace=record.namespace, log_to_driver=False, logging_level="ERROR")
    try:
        rows = []
        for name in record.actors:
            try:
                rows.append(ray.get(ray.get_actor(name).describe.remote(), timeout=30))
            except Exception as error:  # noqa: BLE001 — a dead or missing actor is reported, not raised
                rows.append({"principal": name, "running": False, "error": type(error).__name__})
        return rows
    finally:
        ray.shutdown()


def ledgers(run_dir: Path) -> list[dict[str, Any]] | None:
    """`mpdp budget` for a Ray deployment: every party's ledger as its actor reads it on its node (None when the
    run directory has no Ray role hosts). An actor that does not answer is an error: its parties' spending is
    unknown, not nil."""
    ray = require_ray()
    record = RayRecord.load(RunDirectory(Path(run_dir)))
    if record is None:
        return None
    ray.init(address=record.address, namespace=record.namespace, log_to_driver=False, logging_level="ERROR")
    try:
        rows: list[dict[str, Any]] = []
        for name in record.actors:
            try:
                rows += ray.get(ray.get_actor(name).ledgers.remote(), timeout=60)
            except Exception as error:  # noqa: BLE001 — named in one line
                raise StartupError(f"the Ray actor of {name} did not give its parties' ledgers: "
                                   f"{type(error).__name__}: {error}") from None
        return sorted(rows, key=lambda row: row["party"])
    finally:
        ray.shutdown()


def kill(run_dir: Path, principal: str) -> None:
    """End one role host's actor abruptly (as a crash would): its server dies with it."""
    ray = require_ray()
    record = RayRecord.load(RunDirectory(Path(run_dir)))
    if record is None:
        raise StartupError(f"{run_dir} has no Ray role hosts")
    ray.init(address=record.address, namespace=record.namespace, log_to_driver=False, logging_level="ERROR")
    try:
        ray.kill(ray.get_actor(principal), no_restart=True)
    finally:
        ray.shutdown()


def down(run_dir: Path) -> list[str]:
    """Stop every role host's server, end its actor, and stop the local cluster if `up` started it."""
    ray = require_ray()
    run = RunDirectory(Path(run_dir))
    record = RayRecord.load(run)
    if record is None:
        return []
    stopped = []
    try:
        if not ray.is_initialized():
            ray.init(address=record.address, namespace=record.namespace, log_to_driver=False, logging_level="ERROR")
        for name in record.actors:
            try:
                actor = ray.get_actor(name)
            except ValueError:  # never created, or already gone
                continue
            try:
                ray.get(actor.stop.remote(), timeout=30)
            except Exception:  # noqa: BLE001 — a dead actor has nothing left to stop
                pass
            ray.kill(actor, no_restart=True)
            stopped.append(name)
    except ConnectionError:
        pass  # the cluster is gone, and its actors with it
    finally:
        if ray.is_initialized():
            ray.shutdown()
        if record.head_temp_dir:
            _stop_head(record.head_temp_dir, record.address)
        for ceremony in run.path.glob(ray_keygen.CEREMONY_PREFIX + "*"):  # a key ceremony's TLS files, if its launcher was killed
            shutil.rmtree(ceremony, ignore_errors=True)
        (run.path / RAY_FILE).unlink(missing_ok=True)
    return stopped


def head_processes(temp_dir: str, address: str | None = None) -> set[int]:
    """The Ray processes `up` started, by pid: those whose command lines name its temporary directory or its
    head's address (Ray's client server names only the address, and outlives `ray start` as a child of init),
    and their descendants (Ray's agents and actors' workers rename themselves)."""
    from launcher.deployment.processes import process_owner

    marks = [re.escape(temp_dir.encode())] + ([] if address is None else [re.escape(f"={address}".encode()) + rb"\b"])
    named = re.compile(b"|".join(marks))
    parents: dict[int, int] = {}
    pids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if process_owner(entry) == os.getuid() and named.search((entry / "cmdline").read_bytes()):
                    pids.add(int(entry.name))
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    pids.discard(os.getpid())  # this process may name the directory too
    grown = True
    while grown:
        children = {pid for pid, parent in parents.items() if parent in pids} - pids
        pids |= children
        grown = bool(children)
    return pids


def _stop_head(temp_dir: str, address: str | None = None) -> None:
    """End the Ray processes of the cluster `up` started (`head_processes`) and remove its temporary directory."""
    pids = head_processes(temp_dir, address)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while sig == signal.SIGTERM and time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
            time.sleep(0.2)
    shutil.rmtree(temp_dir, ignore_errors=True)
