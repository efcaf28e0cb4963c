"""`mpdp up` / `mpdp down`: every role as its own OS process on loopback, or
attached to a topology that names addresses elsewhere."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from launcher.common.errors import StartupError
from launcher.common.progress import progress
from launcher.deployment import bundles, certs
from launcher.deployment.children import _running, free_ports, stop
from launcher.deployment.health import is_serving
from launcher.deployment.keygen import check_threshold, committee_size, deal_into_bundles, default_threshold
from mpdp.cryptocore.keys import secret_files
from mpdp.cryptocore.paillier import keyfiles
from mpdp.deployments.topology import RoleEntry, Topology
from mpdp.learning import datasets
from mpdp.platform.lifetime import die_with_parent
from mpdp.privacy import ledger
from mpdp.privacy.ledger import Budget
from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, Identity, party
from mpdp.threshold_sum import quorums
from mpdp.wire.identity import Principal

PROCESSES_FILE = "processes.json"
TOPOLOGY_FILE = bundles.TOPOLOGY_FILE
SCHEMA_FILE = "schema.json"  # the scaling's record of a table read without one (up, prepare)
CLIENT_DATA_FILE = "client.npz"
AUX_DATA_FILE = "curator_aux.npz"
STARTUP_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class RunDirectory:
    """A deployment on one machine: one bundle per role identity (launcher/deployment/bundles.py), the launcher's
    processes file, and the operator's topology naming every bundle's files (the evaluator's view; it is
    copied to no host)."""

    path: Path

    def __post_init__(self):
        # Children start in another directory: every path they are given must be absolute.
        object.__setattr__(self, "path", Path(self.path).expanduser().resolve())

    @property
    def topology(self) -> Path:
        return self.path / TOPOLOGY_FILE

    def bundle(self, principal: Principal | Identity) -> Path:
        if isinstance(principal, Identity):
            principal = Principal.of(principal)
        return self.path / bundles.bundle_name(principal)

    def bundle_of(self, identity: Identity) -> Path:
        """The bundle holding `identity`'s files: its own, or its host's (logical parties)."""
        if identity.role == "party" and not self.bundle(identity).is_dir():
            for candidate in self.path.glob("party-*"):
                principal = bundles.parse_bundle_name(candidate.name)
                if principal is not None and principal.covers(identity):
                    return candidate
        return self.bundle(identity)

    @property
    def client_data(self) -> Path:
        return self.bundle(CLIENT) / CLIENT_DATA_FILE

    @property
    def aux_data(self) -> Path:
        """Charlie's public auxiliary rows (Hamm's X_aux), unlabeled."""
        return self.bundle(CURATOR) / AUX_DATA_FILE

    @property
    def processes(self) -> Path:
        return self.path / PROCESSES_FILE

    def log_file(self, identity: Identity) -> Path:
        return self.bundle_of(identity) / f"{identity.role}_{identity.id}.log"


def split_data(dataset: datasets.Dataset, parties: int, seed: int | None, split_kind: str = "even",
               aux_fraction: float | None = None) -> tuple[datasets.TeacherSplit, dict]:
    """The parties' private parts, Charlie's public rows (unlabeled) and the client's public/test part."""
    if seed is None:  # still reproducible: the seed drawn is recorded with the split
        seed = secrets.randbits(32)
    rng = np.random.default_rng(seed)
    split = datasets.split_for_teachers(dataset, parties, rng, split=split_kind, aux_fraction=aux_fraction)
    client_fields = dict(
        public_features=split.public_features, public_labels=split.public_labels, test_features=split.test_features,
        test_labels=split.test_labels, classes=dataset.classes, dataset=dataset.name, source=dataset.source,
        split=split_kind, split_seed=seed, class_names=np.array(dataset.class_names, dtype=str),
        intercept=dataset.intercept, aux_fraction=np.nan if aux_fraction is None else aux_fraction,
        scaling=json.dumps({k: v for k, v in dataset.scaling.items() if k != "schema_document"}),
        raw_scaling=json.dumps(dataset.raw_scaling),
        party_sizes=np.array([len(labels) for _, labels in split.teacher_parts]))
    if split.party_groups is not None:  # `column:NAME`: which values each party holds, for the reports
        client_fields["party_groups"] = json.dumps(split.party_groups)
    return split, client_fields


def party_hosts(parties: int, per_process: int = 1) -> dict[Identity, Principal]:
    """Parties 1..K in ⌈K/P⌉ processes of at most P consecutive parties, laid out so that the fewest key shares
    (parties 1..ℓ) share a process: c, the most shares one principal holds, decides which thresholds keep one
    decryptable sum per slot (mpdp.threshold_sum.quorums)."""
    if per_process < 1:
        raise ValueError("--parties-per-process must be at least 1")
    sizes = _host_sizes(parties, per_process, committee_size(parties))
    hosts, first = {}, 1
    for size in sizes:
        principal = Principal("party", first, first + size - 1)
        hosts.update({identity: principal for identity in principal.identities})
        first += size
    return hosts


def _host_sizes(parties: int, per_process: int, holders: int) -> list[int]:
    """Process sizes, in party order: the holders 1..ℓ at most `shares` to a process for the smallest `shares`
    that still fits K parties into ⌈K/P⌉ processes of at most P (the last holders' process fills up with
    non-holders), then the rest P at a time."""
    processes = -(-parties // per_process)
    for shares in range(1, per_process + 1):
        holder_processes = -(-holders // shares)
        last_holders = holders - shares * (holder_processes - 1)
        room = per_process - last_holders  # non-holders beside the last holders
        rest = max(0, parties - holders - room)
        if holder_processes + -(-rest // per_process) > processes:
            continue
        # `shares` holders to each holder process; the last one also takes non-holders, up to P
        sizes = [shares] * (holder_processes - 1) + [last_holders + min(room, parties - holders)]
        sizes += [min(per_process, rest - i) for i in range(0, rest, per_process)]
        return sizes
    raise AssertionError("P parties to a process always fit")  # shares = P is the consecutive layout


def bundle_topology(topology: Topology, principal: Principal, directory: Path) -> Topology:
    """What `principal`'s bundle says: every role's address and whether it holds a key share, and files
    (certificate, key, data, key share, model) only for the identities `principal` serves."""
    own = principal.covers

    def entry(e: RoleEntry) -> RoleEntry:
        if own(e.identity):
            return e
        return RoleEntry(e.identity, e.address, listen=e.listen, host=e.host,
                         key_holder=e.key_holder or e.key_share is not None)

    is_client = principal == Principal.of(CLIENT)
    ca = None if topology.insecure else directory / certs.CA_FILE
    return Topology(public_key=directory / keyfiles.PUBLIC_KEY_FILE, roles=tuple(entry(e) for e in topology.roles),
                    ca_certificate=ca, insecure=topology.insecure, single_operator=topology.single_operator,
                    client_certificate=topology.client_certificate if is_client else None,
                    client_key=topology.client_key if is_client else None)


def check_quorum_hosts(principals: dict[Identity, Principal], holders: int, threshold: int | None,
                       single_operator: bool = False) -> int:
    """The threshold for this layout (`threshold`, or the default for its c), refused unless 2t > ℓ + c: with c
    the most shares one process holds, two decrypting sets of holders then share an honest one, who decrypts
    once per slot (mpdp.threshold_sum.quorums). `single_operator`: one operator runs every logical party and
    holds their shares anyway (a simulation); its logical parties stand for separate owners, so c = 1, said."""
    hosts = [principals[party(number)] for number in range(1, holders + 1)]
    colluding = 1 if single_operator else quorums.most_shares(hosts)
    chosen = threshold or default_threshold(holders, colluding)
    check_threshold(chosen, holders, colluding)
    for host in sorted(set(hosts)):
        count = hosts.count(host)
        if count >= chosen:  # only with single_operator: otherwise c < t
            print(f"warning: --single-operator: {host} holds {count} key shares (t = {chosen}) and can decrypt "
                  "alone; its parties are not separate data owners", file=sys.stderr)
    return chosen


def write_bundles(run: RunDirectory, addresses: dict[Identity, str], parts: list[tuple[np.ndarray, np.ndarray]],
                  classes: int, client_fields: dict, aux_features: np.ndarray | None, bits: int,
                  threshold: int | None = None, model: str | None = None, insecure: bool = False,
                  listen_host: str | None = None, overwrite: bool = False,
                  hosts: dict[Identity, Principal] | None = None, keygen: str = "dealer",
                  single_operator: bool = False) -> Topology:
    """One bundle per role identity (and the client's), each holding only what that role needs, and the
    operator's topology naming them all. Directories 0700, files 0600, under a umask of 077 throughout."""
    model_names(model)  # a mistake fails before the key ceremony
    principals = {identity: (hosts or {}).get(identity) or Principal.of(identity) for identity in addresses}
    committee = committee_size(len(parts))
    threshold = check_quorum_hosts(principals, committee, threshold, single_operator)  # before anything is written
    with bundles.private_umask():
        bundles.private_directory(run.path)
        directories = {principal: bundles.private_directory(run.bundle(principal))
                       for principal in sorted(set(principals.values())) + [Principal.of(CLIENT)]}
        if not overwrite:  # refused before anything is written
            credentials = [path for principal, directory in directories.items()
                           for path in (directory / keyfiles.PUBLIC_KEY_FILE, directory / certs.CA_FILE,
                                        *certs.certificate_files(directory, principal), *directory.glob("key_share_*"))]
            existing = [path for path in credentials if os.path.lexists(path)]
            if existing:
                raise FileExistsError(f"{existing[0]} exists; refusing to overwrite a deployment's keys")
        data_files = []
        for number, (features, labels) in enumerate(parts, start=1):
            data_files.append(directories[principals[party(number)]] / f"party_{number}.npz")
            datasets.save_part(data_files[-1], features, labels, classes)
        if aux_features is not None:
            datasets.save_public(run.aux_data, aux_features)
        np.savez(run.client_data, **client_fields)
        holders_by_number = {number: directories[principals[party(number)]]
                             for number in range(1, committee + 1)}
        progress(f"data split among {len(parts)} parties; the threshold key for {committee} key holders "
                 f"({'their own ceremony' if keygen == 'distributed' else keygen})")
        t, holders = deal_into_bundles(len(parts), bits, holders_by_number, list(directories.values()), threshold,
                                       overwrite=overwrite, method=keygen)
        issued = {} if insecure else certs.issue_bundles(directories, overwrite=overwrite)
        if issued:
            progress(f"a CA and certificates for {len(issued)} role processes")

        def entry(identity: Identity, **files: Any) -> RoleEntry:
            listen = f"{listen_host}:{addresses[identity].rsplit(':', 1)[1]}" if listen_host else None
            principal = principals[identity]
            tls: dict[str, Any] = dict(zip(("certificate", "key"), issued[principal])) if issued else {}
            host = str(principal) if principal.single is None else None
            return RoleEntry(identity, addresses[identity], listen=listen, host=host, **files, **tls)

        aux = {"data": run.aux_data} if aux_features is not None else {}
        roles = [entry(AGGREGATOR), entry(CURATOR, **aux)]
        chosen = model_names(model)
        for number, data in enumerate(data_files, start=1):
            holder = number <= holders
            key_share = directories[principals[party(number)]] / keyfiles.share_file_name(number) if holder else None
            roles.append(entry(party(number), key_share=key_share, data=data, key_holder=holder,
                               model=chosen[(number - 1) % len(chosen)] if chosen else None))
            ledger.provision(data, number)  # `serve` requires it: a missing ledger is never a fresh budget
            charge_statistics(data, number, client_fields)
        client_files = {} if insecure else dict(zip(("client_certificate", "client_key"),
                                                      issued[Principal.of(CLIENT)]))
        # The operator's view: each path points into the bundle that holds it.
        topology = Topology(public_key=directories[Principal.of(CLIENT)] / keyfiles.PUBLIC_KEY_FILE,
                            roles=tuple(roles), ca_certificate=None if insecure else directories[Principal.of(CLIENT)] / certs.CA_FILE,
                            insecure=insecure, single_operator=single_operator, **client_files)
        for principal, directory in directories.items():
            bundle_topology(topology, principal, directory).dump(directory / bundles.TOPOLOGY_FILE)
        topology.dump(run.topology)
        bundles.seal(run.path)
    return topology


def charge_statistics(data: Path, number: int, client_fields: dict) -> None:
    """The table's statistics the scaling released under DP (columns without a schema entry) read this party's
    rows too: its ledger records them (mpdp/learning/private_statistics.py)."""
    released = json.loads(str(client_fields.get("scaling", "{}"))).get("statistics_privacy")
    if released is not None:
        from mpdp.learning import private_statistics

        private_statistics.charge(data, number, released, f"up {client_fields.get('dataset')}")


def model_names(model: str | None) -> list[str]:
    """`--model a,b,…`: the parties' local models, assigned round-robin (checked before any work: an own
    classifier `module:Class` must import here and be a classifier)."""
    from mpdp.learning.models import check_name

    names = [name.strip() for name in model.split(",")] if model else []
    for name in names:
        check_name(name)
    return names


def loopback_addresses(parties: int, hosts: dict[Identity, Principal] | None = None) -> dict[Identity, str]:
    """A free port per process: parties of one host share its address."""
    identities = [AGGREGATOR, CURATOR] + [party(number) for number in range(1, parties + 1)]
    principals = [(hosts or {}).get(identity) or Principal.of(identity) for identity in identities]
    distinct = list(dict.fromkeys(principals))
    ports = dict(zip(distinct, (f"127.0.0.1:{port}" for port in free_ports(len(distinct)))))
    return {identity: ports[principal] for identity, principal in zip(identities, principals)}


def prepare(run_dir: Path, parties: int, bits: int, dataset: datasets.Dataset, addresses: dict[Identity, str],
            seed: int | None = None, model: str | None = None, threshold: int | None = None, split: str = "even",
            insecure: bool = False, listen_host: str | None = None, overwrite: bool = False,
            hosts: dict[Identity, Principal] | None = None, aux_fraction: float | None = None,
            keygen: str = "dealer", single_operator: bool = False) -> Topology:
    """Key ceremony, certificates, the data split and topologies, as one bundle per role identity: everything a
    deployment needs. Existing keys and certificates are replaced only if `overwrite`."""
    model_names(model)  # a mistake fails before the key ceremony, as does a split that cannot work
    split_parts, client_fields = split_data(dataset, parties, seed, split, aux_fraction)
    topology = write_bundles(RunDirectory(Path(run_dir)), addresses, split_parts.teacher_parts, dataset.classes,
                             client_fields, split_parts.public_features, bits, threshold, model, insecure,
                             listen_host, overwrite, hosts, keygen, single_operator)
    document = dataset.scaling.get("schema_document")
    if document is not None:  # what the scaling read from the table, for the data owner to publish or replace
        schema = RunDirectory(Path(run_dir)).path / SCHEMA_FILE
        schema.write_text(json.dumps(document, indent=1) + "\n")
        print(f"  the scaling's bounds, levels and shares: {schema} (publish it, or edit and pass it back with "
              "--schema)", flush=True)
    return topology


def prepared(run_dir: Path, identities: list[Identity]) -> bool:
    """Whether `run_dir` holds a deployment of these roles: every bundle (each role's host's, the client's) has its
    topology. `prepare` writes the topologies last, so a run cut short is not one."""
    run = RunDirectory(Path(run_dir))
    return all((run.bundle_of(identity) / TOPOLOGY_FILE).is_file() for identity in [*identities, CLIENT])


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


def _role_start(foreground: bool):
    """In the child before exec: a foreground run's roles die with the launcher (PR_SET_PDEATHSIG), so an
    interrupted `mpdp demo` or test leaves none behind; `mpdp up` roles outlive it."""
    if not foreground:
        return None
    return lambda: die_with_parent(signal.SIGTERM)


def serve_arguments(topology_path: Path, identity: Identity, insecure: bool, test_mode: bool, fault: str | None,
                    budget: Budget | None = None, allow_unproven: bool = False) -> list[str]:
    """`serve …` for one role host, as `launcher.cli` takes it."""
    arguments = serve_command(topology_path, identity, insecure)[1:]
    if identity.role == "party":
        arguments += (["--budget", budget.argument()] if budget is not None else []) + \
            (["--allow-unproven"] if allow_unproven else [])
    if test_mode and (identity.role in ("party", "curator") or fault):  # those that draw (noise, Hamm's η)
        arguments.append("--test-mode")
    if test_mode and fault:
        arguments += ["--fault", fault]
    return arguments


def _spawn(run: RunDirectory, identity: Identity, insecure: bool, test_mode: bool, fault: str | None,
           budget: Budget | None = None, allow_unproven: bool = False, foreground: bool = False) -> int:
    # Each role reads its own bundle only: the topology there names no other role's files.
    command = [sys.executable, "-m", "launcher.cli",
               *serve_arguments(run.bundle_of(identity) / TOPOLOGY_FILE, identity, insecure, test_mode, fault, budget,
                                allow_unproven)]
    log = bundles.open_private(run.log_file(identity))
    try:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, cwd=Path(__file__).resolve().parent.parent.parent,
                                   umask=bundles.PRIVATE_UMASK, preexec_fn=_role_start(foreground))
    finally:
        os.close(log)
    return process.pid


def _write_processes(run: RunDirectory, processes: dict[str, int]) -> None:
    secret_files.write_file(run.processes, json.dumps(processes, indent=2).encode(), overwrite=True)


def start_processes(run: RunDirectory, topology: Topology, test_mode: bool = False,
                    faults: dict[int, str] | None = None, budget: Budget | None = None,
                    allow_unproven: bool = False, foreground: bool = False) -> dict[str, int]:
    processes = {str(entry.identity): _spawn(run, entry.identity, topology.insecure, test_mode,
                                             (faults or {}).get(entry.identity.id), budget, allow_unproven, foreground)
                 for entry in topology.host_entries}
    _write_processes(run, processes)
    return processes


def restart(run_dir: Path, identity: Identity, test_mode: bool = False, fault: str | None = None,
            budget: Budget | None = None, allow_unproven: bool = False, foreground: bool = False) -> None:
    """Start one role again (after it died or was stopped), with `fault` (test mode) or none, and wait until it
    serves. A copy that still runs is stopped first."""
    run = RunDirectory(Path(run_dir))
    processes = json.loads(run.processes.read_text())
    topology = Topology.load(run.topology)
    identity = topology.principal_of(identity).identities[0]  # the process of its host
    old = processes.get(str(identity))
    if old is not None and _running(old):
        stop({str(identity): old})
    processes[str(identity)] = _spawn(run, identity, topology.insecure, test_mode, fault, budget, allow_unproven,
                                      foreground)
    _write_processes(run, processes)
    wait_healthy(topology, {str(identity): processes[str(identity)]}, run=run, only=identity)


def up(run_dir: Path, parties: int, bits: int, dataset: datasets.Dataset, seed: int | None = None,
       model: str | None = None, test_mode: bool = False, faults: dict[int, str] | None = None,
       threshold: int | None = None, split: str = "even", insecure: bool = False,
       startup_timeout: float = STARTUP_TIMEOUT_S, parties_per_process: int = 1,
       aux_fraction: float | None = None, budget: Budget | None = None, allow_unproven: bool = False,
       foreground: bool = False, keygen: str = "dealer", single_operator: bool = False) -> Topology:
    """Prepare bundles in `run_dir` and start every role from its own. `foreground`: the roles die with this
    process (a demo, a test); otherwise they keep serving after it exits, until `mpdp down`."""
    run = RunDirectory(Path(run_dir))
    if run.processes.exists() and any(_running(pid) for pid in json.loads(run.processes.read_text()).values()):
        raise StartupError(f"{run.path} already has running processes; run `mpdp down --run-dir {run.path}` first")
    # `up` always makes a fresh deployment: its keys replace a stopped run's (atomically, mode 0600).
    hosts = party_hosts(parties, parties_per_process)
    topology = prepare(run.path, parties, bits, dataset, loopback_addresses(parties, hosts), seed, model, threshold,
                       split, insecure, overwrite=True, hosts=hosts, aux_fraction=aux_fraction, keygen=keygen,
                       single_operator=single_operator)
    progress(f"starting {len(topology.host_entries)} role processes")
    started = time.monotonic()
    processes = start_processes(run, topology, test_mode, faults, budget, allow_unproven, foreground)
    try:
        wait_healthy(topology, processes, timeout=startup_timeout, run=run)
    except BaseException:
        down(run.path)
        raise
    progress(f"every role serving after {time.monotonic() - started:.0f} s")
    return topology


def running_servers(uid: int | None = None) -> dict[str, int]:
    """Every mpdp role server of user `uid` (by default the caller) on this machine (found through /proc, so even
    one whose run directory is gone): its command line → pid. Another user's servers are theirs to list and stop,
    even for root: `ps` and `down --all` act on what this list returns."""
    owner = os.getuid() if uid is None else uid
    servers = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if process_owner(entry) != owner:
                continue
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        words = [a.decode(errors="replace") for a in args if a]
        if "serve" in words and any(w == "launcher.cli" or w.endswith("/mpdp") or w == "mpdp" for w in words):
            servers[" ".join(words[words.index("serve"):])] = int(entry.name)
    return servers


def process_owner(entry: Path) -> int:
    """The real uid of the process /proc/PID describes: the user who started it (the directory's owner is not:
    a process that made itself non-dumpable, as a setuid one does, shows root there)."""
    for line in (entry / "status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise ValueError(f"{entry}/status names no Uid")
def down(run_dir: Path) -> list[str]:
    """SIGTERM every process this run directory started; SIGKILL what is left after a grace period."""
    run = RunDirectory(Path(run_dir))
    if not run.processes.exists():
        return []
    processes = json.loads(run.processes.read_text())
    stopped = stop(processes)
    run.processes.unlink()
    return stopped
