"""`mpdp up --network PROFILE`: every link between the deployment's role hosts (and from the client to them)
under one network profile.

Two emulators could impose it. `tc netem` on each role's link in its own network namespace needs the kernel's
`sch_netem` and CAP_NET_ADMIN; `netem_status` says whether this machine has both, and is recorded beside the
choice. The relay (mpdp.wire.relay) needs neither and is what `up` uses: one relay process for the deployment,
one listening port per directed link, started before the roles; the roles (through the MPDP_NETWORK
environment variable they inherit) and the client dial their peers through it (mpdp.wire.links).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

from mpdp.platform.lifetime import die_with_parent
from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR
from mpdp.wire import links
from mpdp.wire.identity import Principal
from mpdp.wire.profiles import NetworkProfile
from mpdp.wire.relay import Link, Relays

LINKS_FILE = "network.json"
RELAY_PID_FILE = "relay.pid"
RELAY_LOG_FILE = "relay.log"
READY = "relays ready"
RESHAPED = "links now under"
RELAY_START_TIMEOUT_S = 30.0
EMULATOR = "relay"


def netem_status() -> tuple[bool, str]:
    """(usable, why): whether `tc netem` could shape this machine's links."""
    if shutil.which("tc") is None:
        return False, "no `tc` command"
    if os.geteuid() != 0:
        return False, "not root (netem in network namespaces needs CAP_NET_ADMIN)"
    modules = Path("/proc/modules").read_text() if Path("/proc/modules").exists() else ""
    release = os.uname().release
    built = any(Path(f"/lib/modules/{release}").glob("**/sch_netem.ko*")) if Path(f"/lib/modules/{release}").exists() \
        else False
    if "sch_netem" not in modules and not built:
        return False, f"the kernel ({release}) has no sch_netem module"
    return True, "sch_netem and CAP_NET_ADMIN present"


def host_principals(parties: int, parties_per_process: int = 1) -> list[Principal]:
    """Every process that dials or is dialled: the client, the aggregator, the curator and each party host."""
    from launcher.deployment.processes import party_hosts

    hosts = list(dict.fromkeys(party_hosts(parties, parties_per_process).values()))
    return [Principal.of(CLIENT), Principal.of(AGGREGATOR), Principal.of(CURATOR), *hosts]


def directed_links(parties: int, parties_per_process: int = 1) -> list[tuple[str, str]]:
    """Every directed link between two hosts, (source, target), in one order: nobody dials the client.
    `up` and `compose` (launcher.deployment.compose_network) both give each of these one relay."""
    hosts = [str(p) for p in host_principals(parties, parties_per_process)]
    return [(source, target) for source in hosts for target in hosts
            if source != target and target != str(Principal.of(CLIENT))]


def plan(run_dir: Path, profile: NetworkProfile, parties: int, parties_per_process: int = 1) -> Path:
    """A relay port for every directed link between two hosts, in `network.json`."""
    from launcher.deployment.children import free_port

    taken: set[int] = set()
    table: dict[tuple[str, str], str] = {}
    for link in directed_links(parties, parties_per_process):
        port = free_port()
        while port in taken:
            port = free_port()
        taken.add(port)
        table[link] = f"127.0.0.1:{port}"
    usable, why = netem_status()
    path = Path(run_dir) / LINKS_FILE
    links.write(path, profile, f"{EMULATOR} (user-space, one per directed link; tc netem {'usable' if usable else 'not'}: {why})",
                table)
    return path


def _relay_start(foreground: bool):
    """In the relay's process before exec: a foreground run's relays die with the launcher, as its roles do."""
    return (lambda: die_with_parent(signal.SIGTERM)) if foreground else None


def start(run_dir: Path, profile: NetworkProfile, parties: int, parties_per_process: int = 1,
          foreground: bool = False) -> Path:
    """Plan the links and start the relay process; returns the link table once every relay listens."""
    from launcher.deployment.processes import RunDirectory

    run = RunDirectory(Path(run_dir))
    run.path.mkdir(parents=True, exist_ok=True)
    stop(run.path)
    table = plan(run.path, profile, parties, parties_per_process)
    log_path = run.path / RELAY_LOG_FILE
    with open(log_path, "w") as log:
        process = subprocess.Popen([sys.executable, "-m", "launcher.deployment.network", str(table), str(run.topology)],
                                   stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, preexec_fn=_relay_start(foreground))
    (run.path / RELAY_PID_FILE).write_text(f"{process.pid}\n")
    deadline = time.monotonic() + RELAY_START_TIMEOUT_S
    while READY not in log_path.read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            stop(run.path)
            raise RuntimeError(f"the link relays did not start: {log_path.read_text().strip()[-500:]}")
        time.sleep(0.05)
    return table


def reshape(run_dir: Path, profile: NetworkProfile) -> None:
    """Put the running deployment's links under `profile` (its relays keep their ports and connections): one
    deployment measured under several profiles."""
    run_dir = Path(run_dir)
    table = json.loads((run_dir / LINKS_FILE).read_text())
    table["profile"] = profile.to_json()
    _replace(run_dir / LINKS_FILE, table)
    links.forget()
    log_path = run_dir / RELAY_LOG_FILE
    expected = log_path.read_text().count(RESHAPED) + 1
    os.kill(int((run_dir / RELAY_PID_FILE).read_text()), signal.SIGHUP)
    deadline = time.monotonic() + RELAY_START_TIMEOUT_S
    while log_path.read_text().count(RESHAPED) < expected:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the link relays did not take the profile {profile.name}")
        time.sleep(0.02)


def stop(run_dir: Path) -> bool:
    """Stop the relay process of `run_dir` (if any) and forget its links."""
    run_dir = Path(run_dir)
    pid_file, stopped = run_dir / RELAY_PID_FILE, False
    if pid_file.exists():
        pid = int(pid_file.read_text())
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
            stopped = True
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    break
            except ChildProcessError:  # not ours (started by another `mpdp up`): ask the kernel
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
            time.sleep(0.05)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        pid_file.unlink()
    (run_dir / LINKS_FILE).unlink(missing_ok=True)
    return stopped


@contextlib.contextmanager
def active(run_dir: Path | None) -> Iterator[dict | None]:
    """Within it, this process dials through `run_dir`'s relays (if the deployment has them)."""
    path = Path(run_dir) / LINKS_FILE if run_dir is not None else None
    if path is None or not path.exists():
        yield None
        return
    before = os.environ.get(links.ENVIRONMENT)
    os.environ[links.ENVIRONMENT] = str(path.resolve())
    try:
        yield links.table()
    finally:
        if before is None:
            os.environ.pop(links.ENVIRONMENT, None)
        else:
            os.environ[links.ENVIRONMENT] = before


def up(run_dir: Path, profile: NetworkProfile, parties: int, *args, **kwargs):
    """`processes.up` with every link under `profile` (plain `processes.up` for loopback)."""
    from launcher.deployment import processes

    if not profile.emulated:
        stop(run_dir)
        return processes.up(run_dir, parties, *args, **kwargs)
    table = start(run_dir, profile, parties, kwargs.get("parties_per_process", 1), kwargs.get("foreground", False))
    try:
        with active(run_dir):  # the roles inherit the link table, to use once it is armed
            topology = processes.up(run_dir, parties, *args, **kwargs)
        arm(table)
        return topology
    except BaseException:
        stop(run_dir)
        raise


def arm(table_path: Path) -> None:
    """From now on every process of the deployment dials through the relays: the roles serve where they lead.
    (The key ceremony `up` ran before this, between holders listening at addresses of their own, on loopback.)"""
    table = json.loads(Path(table_path).read_text())
    table["armed"] = True
    _replace(Path(table_path), table)
    links.forget()


def _replace(path: Path, table: dict) -> None:
    """Rewrite the link table at once: the roles may read it meanwhile."""
    draft = path.with_suffix(".draft")
    draft.write_text(json.dumps(table, indent=1) + "\n")
    draft.replace(path)


def down(run_dir: Path) -> list[str]:
    from launcher.deployment import processes

    stopped = processes.down(run_dir)
    if stop(run_dir):
        stopped.append("network/relay")
    return stopped


async def serve(table_path: Path, resolve: Callable[[str], Awaitable[tuple[str, int]]],
                listen_host: str | None = None, ready: Callable[[], None] | None = None) -> None:
    """Run the relay of every link in the table until SIGTERM or SIGINT; SIGHUP reads the table's profile again.
    Each relay listens at its link's address (on `listen_host` instead of the address's host, when given: a
    container listens on every interface for the name its peers dial) and leads to `resolve(target)`."""
    table = json.loads(table_path.read_text())
    profile = NetworkProfile.from_json(table["profile"])

    def listen(address: str) -> tuple[str, int]:
        host, port = address.rsplit(":", 1)
        return (listen_host or host, int(port))

    relays = Relays(profile, [Link(link["from"], link["to"], listen(link["address"])) for link in table["links"]],
                    resolve)
    await relays.start()
    if ready is not None:
        ready()
    print(f"{READY}: {len(table['links'])} links under {profile.describe()}", flush=True)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()

    def reshape() -> None:  # `network.reshape`: the table's profile, read again
        changed = NetworkProfile.from_json(json.loads(table_path.read_text())["profile"])
        relays.reshape(changed)
        print(f"{RESHAPED}: {changed.describe()}", flush=True)

    loop.add_signal_handler(signal.SIGHUP, reshape)
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    try:
        await stopping.wait()
    finally:  # stopped by a signal, or cancelled (in one process with its caller)
        await relays.close()


async def _serve(table_path: Path, topology_path: Path) -> None:
    from mpdp.deployments.topology import Topology

    addresses: dict[str, tuple[str, int]] = {}

    async def resolve(target: str) -> tuple[str, int]:
        if target not in addresses:  # the topology is written after the relays start: read it at first use
            topology = Topology.load(topology_path)
            for entry in topology.host_entries:
                host, port = entry.address.rsplit(":", 1)
                addresses[str(entry.principal)] = (host, int(port))
        return addresses[target]

    await serve(table_path, resolve)


if __name__ == "__main__":
    asyncio.run(_serve(Path(sys.argv[1]), Path(sys.argv[2])))


def add_options(parser) -> None:
    """`--network PROFILE` and the explicit link figures, for `mpdp up` and `mpdp compose`."""
    from mpdp.wire.profiles import PROFILES

    group = parser.add_argument_group("network emulation (every link between role hosts; docs/networks.md)")
    # No argparse `choices`: `profile_of` refuses an unknown name in one line, not under a usage.
    group.add_argument("--network", metavar="PROFILE",
                       help=f"a named link profile: {', '.join(PROFILES)} (default: plain loopback)")
    group.add_argument("--latency", metavar="MS", help="one-way delay added on each link, e.g. 20ms (RTT = twice it)")
    group.add_argument("--bandwidth", metavar="RATE", help="each link direction's rate, e.g. 100mbit")
    group.add_argument("--loss", metavar="P", help="TCP segment loss, e.g. 1%% (emulated as retransmission delay)")


def profile_of(args) -> NetworkProfile:
    from mpdp.wire.profiles import resolve

    return resolve(getattr(args, "network", None), getattr(args, "latency", None), getattr(args, "bandwidth", None),
                   getattr(args, "loss", None))
