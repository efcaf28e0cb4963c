"""Role hosts as Ray actors on a local two-node cluster (`ray.cluster_utils.Cluster`): every protocol completes
with the closed-form message counts and the results of a local `up` with the same seeds, each host's bundle
travels through Ray only to its actor, and an actor killed mid-session is a killed process (the session
aborts; nothing is released)."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import threading
import time
from pathlib import Path

import grpc
import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="the `ray` extra is not installed: pip install -e '.[ray]'")

from launcher import cli  # noqa: E402
from launcher.commands import budget  # noqa: E402
from launcher.deployment import ray_hosts  # noqa: E402
from launcher.protocols.dppp import client as dppp_client  # noqa: E402
from launcher.protocols.du.client import run_du_session  # noqa: E402
from mpdp.cryptocore.paillier import keyfiles  # noqa: E402
from mpdp.learning import datasets  # noqa: E402
from mpdp.privacy.ledger import UNLIMITED  # noqa: E402
from mpdp.proto.v1 import common_pb2  # noqa: E402
from mpdp.proto.v1.role_pb2_grpc import RoleStub  # noqa: E402
from mpdp.sessions.identity import AGGREGATOR, CLIENT, party  # noqa: E402
from tests.deployment import TEST_BITS, TEST_MODEL, Deployment, deployment  # noqa: E402
from tests.test_dppp_network import closed_form_counts, observed_counts  # noqa: E402
from tests.test_du_network import SEED as DU_SEED  # noqa: E402
from tests.test_du_sessions import closed_form as du_closed_form  # noqa: E402
from tests.test_hamm_network import closed_form as hamm_closed_form  # noqa: E402
from tests.test_hamm_network import run as run_hamm  # noqa: E402
from tests.test_pathak_network import closed_form as pathak_closed_form  # noqa: E402
from tests.test_pathak_network import observed as pathak_observed  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.slow]
STARTUP_S = 600.0  # a shared, loaded machine: actors and their servers start slowly, never wrongly


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    # Ray gives a starting node 30 s to register with its GCS, which a loaded machine can miss: the nodes'
    # daemons start at a higher priority (inherited by the actors' servers), and a failed start is retried.
    os.environ.update(ray_hosts.PATIENT_RAY)  # inherited by the nodes' raylets
    niceness = os.getpriority(os.PRIO_PROCESS, 0)
    if os.geteuid() == 0:
        os.setpriority(os.PRIO_PROCESS, 0, niceness - 5)
    # Ray's Cluster writes its address to <tmp>/ray/ray_current_cluster without creating that directory
    # (ray 2.60 on a machine where no Ray has run yet)
    (Path(tempfile.gettempdir()) / "ray").mkdir(exist_ok=True)
    try:
        for attempt in range(3):
            temp_dir = tempfile.mkdtemp(prefix="mpdp-ray-")  # short: Ray's socket paths must fit 107 bytes
            nodes = Cluster()
            try:
                nodes.add_node(num_cpus=1, include_dashboard=False, object_store_memory=200 * 2**20,
                               temp_dir=temp_dir)  # the head
                nodes.add_node(num_cpus=1, object_store_memory=200 * 2**20)
                nodes.wait_for_nodes()
                break
            except Exception:
                nodes.shutdown()
                ray_hosts._stop_head(temp_dir)  # what a failed node start leaves running
                if attempt == 2:
                    raise
    finally:
        if os.geteuid() == 0:
            os.setpriority(os.PRIO_PROCESS, 0, niceness)
    try:
        yield nodes
    finally:
        nodes.shutdown()
        ray_hosts._stop_head(temp_dir)


def ray_deployment(cluster, run_dir: Path, parties: int, per_process: int, faults=None) -> Deployment:
    topology = ray_hosts.up(run_dir, cluster.address, parties, per_process, TEST_BITS, datasets.load("breast-cancer"),
                            seed=7, model=TEST_MODEL, test_mode=True, faults=faults, budget=UNLIMITED,
                            startup_timeout=STARTUP_S)
    return Deployment(run_dir, topology)


def sessions(d: Deployment) -> dict:
    """One session of each protocol, with fixed seeds where the protocol takes one."""
    from launcher.protocols.du.client import session_parameters as du_parameters

    reports = {"dppp": d.run_dppp(queries=5)}
    reports["hamm"] = run_hamm(d, seed=4)[1]
    parameters = du_parameters(d.topology, d.client_data, "functional", 1.0, 2, False, local_epochs=10)
    reports["du"] = asyncio.run(run_du_session(d.topology, d.client_data, parameters, 300.0, noise_seed=DU_SEED))
    reports["pathak"] = d.run_pathak(noise_seed=5)
    return reports


def counts_hold_the_closed_forms(reports: dict, parties: int) -> None:
    assert reports["dppp"]["result"]["contributors"] == list(range(1, parties + 1))
    # t as the layout made it: 2t > ℓ + c raises it when one process holds several shares (mpdp.threshold_sum.quorums)
    threshold = reports["dppp"]["parameters"]["threshold"]
    assert observed_counts(reports["dppp"]) == closed_form_counts(parties, parties, threshold=threshold)
    assert reports["hamm"]["result"]["voters"] == parties
    assert observed_counts(reports["hamm"]) == hamm_closed_form(parties, parties)
    assert observed_counts(reports["du"]) == du_closed_form(parties, 2, client_rpc="AwaitResult")
    self_routed = sum(kinds.get("routed_share", 0) for kinds in reports["pathak"]["evaluator_view"]["self_deliveries"]
                      .values())
    assert pathak_observed(reports["pathak"]) == pathak_closed_form(parties, self_routed)


def _listening_ports(pids: set[int] | None = None) -> set[int]:
    """The TCP ports listened on (by `pids`, or by any process of this network namespace)."""
    sockets = None
    if pids is not None:
        sockets = set()
        for pid in pids:
            try:
                links = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
            except OSError:
                continue
            sockets |= {link[len("socket:["):-1] for link in links if link.startswith("socket:[")}
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and (sockets is None or fields[9] in sockets):  # 0A: LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_up_leaves_no_share_on_the_launcher_and_down_no_process_or_port(tmp_path):
    """`up --ray` with no address starts its own head; after `up` only the holder actors hold the key shares; `down`
    ends all of it: Ray's daemons, its client server (which names only the head's address and is a child of
    init), the actors' workers and their role servers."""
    (Path(tempfile.gettempdir()) / "ray").mkdir(exist_ok=True)
    os.environ.update(ray_hosts.PATIENT_RAY)
    run_dir = tmp_path / "own-head"
    try:
        # three actors (one party host of two parties: a simulation, hence --single-operator): what the checks need
        ray_hosts.up(run_dir, None, 2, 2, TEST_BITS, datasets.load("breast-cancer"), seed=7, model=TEST_MODEL,
                     test_mode=True, budget=UNLIMITED, startup_timeout=STARTUP_S, single_operator=True)
        record = ray_hosts.RayRecord.load(ray_hosts.RunDirectory(run_dir))
        assert record is not None and record.head_temp_dir is not None
        hosts = ray_hosts.describe(run_dir)
        pids = ray_hosts.head_processes(record.head_temp_dir, record.address)
        commands = [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in pids if _alive(pid)]
        assert any(b"ray.util.client.server" in command for command in commands)
        assert {h["pid"] for h in hosts} | {h["actor_pid"] for h in hosts} <= pids
        ports = _listening_ports(pids)
        assert int(record.address.rsplit(":", 1)[1]) in ports  # the head's GCS
        # Each key share is in its holder actor's private directory only, none in the launcher's run directory.
        held = [json.loads(path.read_text())["secret"][2:].encode() for h in hosts
                for path in Path(h["bundle"]).glob("key_share_*")]
        assert len(held) == 2
        launcher_files = [path for path in run_dir.rglob("*") if path.is_file()]
        assert not [path for path in launcher_files if "key_share" in path.name]
        assert not [path for path in launcher_files if any(secret in path.read_bytes() for secret in held)]
        assert {int(h["address"].rsplit(":", 1)[1]) for h in hosts} <= ports  # the role servers
    finally:
        ray_hosts.down(run_dir)
    assert not [pid for pid in pids if _alive(pid)]
    assert not ray_hosts.head_processes(record.head_temp_dir, record.address)
    assert not ports & _listening_ports()
    assert not Path(record.head_temp_dir).exists() and not (run_dir / ray_hosts.RAY_FILE).exists()


def test_every_protocol_on_two_nodes_equals_a_local_up(cluster, tmp_path, capsys):
    run_dir = tmp_path / "ray"
    try:
        d = ray_deployment(cluster, run_dir, 5, 3)
        hosts = ray_hosts.describe(run_dir)
        assert sorted(h["principal"] for h in hosts) == ["aggregator/0", "curator/0", "party/1-3", "party/4-5"]
        assert all(h["running"] for h in hosts)
        assert len({h["node_id"] for h in hosts}) == 2  # spread over both nodes
        # The operator's topology names the addresses the actors reported.
        assert {str(e.principal): e.address for e in d.topology.host_entries} == {h["principal"]: h["address"]
                                                                                  for h in hosts}
        on_ray = sessions(d)
        spent_on_ray = ray_hosts.ledgers(run_dir)  # each actor's parties' ledgers, read on its node
        capsys.readouterr()
        assert cli.main(["budget", "--run-dir", str(run_dir), "--format", "json"]) == 0
        shown = json.loads(capsys.readouterr().out)["report"]["parties"]
        launcher_copy = budget.ledgers(d.run.topology)  # the bundles `up` handed over: they spend nothing
    finally:
        ended = ray_hosts.down(run_dir)
    assert len(ended) == 4 and not (run_dir / ray_hosts.RAY_FILE).exists()
    deadline = time.monotonic() + 30  # a killed actor's worker exits once its raylet has told it
    while any(_alive(h[key]) for h in hosts for key in ("pid", "actor_pid")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [h for h in hosts if _alive(h["pid"]) or _alive(h["actor_pid"])]
    counts_hold_the_closed_forms(on_ray, 5)
    with deployment(tmp_path, 5, parties_per_process=3) as local:
        here = sessions(local)
        spent_here = budget.ledgers(local.run.topology)
    assert [row["sessions"] for row in launcher_copy] == [0] * 5
    assert [row["sessions"] for row in spent_on_ray] == [row["sessions"] for row in spent_here] == [4] * 5
    for rows in (spent_on_ray, shown):
        assert [(r["party"], r["by_protocol"], r["epsilon"], r["delta"]) for r in rows] == \
            [(r["party"], r["by_protocol"], r["epsilon"], r["delta"]) for r in spent_here]
    counts_hold_the_closed_forms(here, 5)
    for protocol in ("dppp", "hamm", "du"):
        assert observed_counts(on_ray[protocol]) == observed_counts(here[protocol]), protocol
    # Pathak's routing permutation is drawn per session: the shares a party routes to itself (no RPC) differ.
    routed = {key: count for key, count in pathak_observed(on_ray["pathak"]).items() if "routed_share" not in key[2]}
    assert routed == {key: count for key, count in pathak_observed(here["pathak"]).items()
                      if "routed_share" not in key[2]}
    assert on_ray["hamm"]["result"]["weights"] == here["hamm"]["result"]["weights"]
    assert on_ray["du"]["result"]["theta"] == here["du"]["result"]["theta"]
    assert np.max(np.abs(np.array(on_ray["pathak"]["result"]["w"]) - np.array(here["pathak"]["result"]["w"]))) \
        <= 2**-20


def _files_holding(secrets: list[bytes], roots: list[Path], since: float, skip: list[Path]) -> list[Path]:
    """Files under `roots` written since `since` (outside `skip`) whose bytes hold one of the key shares."""
    found = []
    for root in roots:
        for directory, subdirectories, files in os.walk(root):
            here = Path(directory)
            subdirectories[:] = [name for name in subdirectories if here / name not in skip]
            for name in files:
                path = here / name
                try:
                    info = path.lstat()
                    if not path.is_file() or info.st_mtime < since or info.st_size > 64 * 2**20:
                        continue
                    content = path.read_bytes()
                except OSError:  # another user's, or gone meanwhile
                    continue
                if any(secret in content for secret in secrets):
                    found.append(path)
    return found


def test_the_key_ceremony_runs_among_the_actors_and_no_share_reaches_the_launcher(cluster, tmp_path, monkeypatch):
    """`--keygen distributed` under `up --ray`: each key holder is a process of the actor that hosts it, on its
    node, and writes its share only into that actor's private directory (not the launcher's run directory, though
    this cluster's nodes are the launcher's machine); the launcher gets the public key. After the ceremony no file
    the launcher's side wrote holds a share; a session decrypts with the key; `down` leaves no process of it."""
    from launcher.deployment import distributed_keygen, keygen

    def on_the_launcher(*args, **kwargs):
        raise AssertionError("a key made in the launcher's process")

    # the two ways the launcher's process makes shares itself: its own ceremony's holders, the dealer
    monkeypatch.setattr(distributed_keygen, "ceremony", on_the_launcher)
    monkeypatch.setattr(keygen, "generate_threshold_key", on_the_launcher)
    since = time.time() - 1
    run_dir = tmp_path / "ray-dkg"
    try:
        # party/1-2 hosts two key holders (two processes of its actor), party/3 one; t = 3 (2t > ℓ + c = 3 + 2)
        topology = ray_hosts.up(run_dir, cluster.address, 3, 2, TEST_BITS, datasets.load("breast-cancer"), seed=7,
                                model=TEST_MODEL, test_mode=True, budget=UNLIMITED, startup_timeout=STARTUP_S,
                                keygen="distributed")
        d = Deployment(run_dir, topology)
        hosts = ray_hosts.describe(run_dir)
        assert len({h["node_id"] for h in hosts}) == 2
        private = [Path(h["bundle"]) for h in hosts]
        assert not [directory for directory in private if directory.is_relative_to(run_dir)]
        public = keyfiles.load_public_key(topology.public_key)  # what the launcher received: the public part
        shares = {}
        for h in hosts:
            directory = Path(h["bundle"])
            assert directory.stat().st_mode & 0o777 == 0o700 and not (directory / "keygen").exists()
            assert len(h["holder_pids"]) == {"party/1-2": 2, "party/3": 1}.get(h["principal"], 0)
            for path in directory.glob("key_share_*"):
                assert path.stat().st_mode & 0o777 == 0o600
                share = keyfiles.load_key_share(path)
                assert share.public == public and path.name == f"key_share_{share.index}.json"
                shares[share.index] = share.secret
        assert sorted(shares) == [1, 2, 3] and public.holders == 3 and public.threshold == 3
        secrets = [form for secret in shares.values() for form in (f"{secret:x}".encode(), str(secret).encode())]
        assert not list(run_dir.rglob("key_share_*"))
        launcher_side = [run_dir, Path(tempfile.gettempdir())]  # the run directory and whatever else it wrote
        assert not _files_holding(secrets, launcher_side, since, skip=private)
        assert _files_holding(secrets, private, since, skip=[])  # the scan finds a share where one is
        # τ = 3 contributors: party/1-2 alone controls 2, fewer than a decryptable sum needs
        report = d.run_dppp(queries=3, honest_fraction=1.0)  # the key the actors made decrypts the round's sum
        assert report["result"]["contributors"] == [1, 2, 3]
    finally:
        ray_hosts.down(run_dir)
    deployment_pids = {pid for h in hosts for pid in [h["pid"], h["actor_pid"], *h["holder_pids"]]}
    deadline = time.monotonic() + 30  # a killed actor's worker exits once its raylet has told it
    while any(_alive(pid) for pid in deployment_pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in deployment_pids if _alive(pid)]
    marks = [str(directory).encode() for directory in private] + [str(run_dir).encode()]
    remaining = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and any(mark in (entry / "cmdline").read_bytes() for mark in marks):
                remaining.append(int(entry.name))
        except OSError:
            continue
    assert not [pid for pid in remaining if _alive(pid) and pid != os.getpid()]
    assert not [directory for directory in private if directory.exists()]


def test_an_actor_receives_only_its_own_holders_ceremony_files(tmp_path):
    """What the key ceremony hands an actor: the CA certificate and its own holders' TLS files, and a topology that
    names only those; never another holder's key, the client's, or a share (none exists yet)."""
    from launcher.deployment import ray_keygen
    from mpdp.deployments.topology import Topology

    topology = ray_keygen.ceremony_topology(tmp_path, {j: f"127.0.0.1:{20000 + j}" for j in (1, 2, 3)})
    files = ray_keygen.holder_files(topology, tmp_path, [1, 2])
    assert set(files) == {"topology.toml", "ca.pem", "party_1.pem", "party_1.key", "party_2.pem", "party_2.key"}
    (tmp_path / "actor").mkdir()
    for name, content in files.items():
        (tmp_path / "actor" / name).write_bytes(content)
    view = Topology.load(tmp_path / "actor" / "topology.toml")
    assert view.key_holders == [1, 2, 3]
    assert [e.identity.id for e in view.parties if e.key is not None] == [1, 2]
    assert view.entry(party(1)).key_share == tmp_path / "actor" / "key_share_1.json"  # written by the holder
    assert view.client_key is None and not list(tmp_path.glob("key_share_*"))


def test_a_bundle_reaches_only_its_own_actor(tmp_path):
    """What `up` hands an actor: its own bundle's files, never another role's key share, data or TLS key."""
    from launcher.deployment import processes

    run = processes.RunDirectory(tmp_path / "bundles")
    hosts = processes.party_hosts(4, 2)
    processes.prepare(run.path, 4, TEST_BITS, datasets.load("breast-cancer"), processes.loopback_addresses(4, hosts),
                      seed=7, hosts=hosts)
    first = ray_hosts._bundle_files(run.bundle(hosts[party(1)]))
    second = ray_hosts._bundle_files(run.bundle(hosts[party(3)]))
    assert {"party_1.npz", "party_2.npz", "topology.toml"} <= set(first)
    assert not any("party_3" in name or "party_4" in name for name in first)
    assert not set(first) & {name for name in second if name.startswith(("key_share", "party_"))}
    assert not any(name.endswith(".log") for name in first)


def test_an_actor_killed_mid_session_aborts_it_as_a_killed_process_does(cluster, tmp_path):
    """K = 4 needs ⌈2/3·4⌉ = 3 contributors: the host of parties 3–4 stops on the round's queries (mid-session)
    and its actor is killed; the round aborts at everyone, nothing is released, the others keep serving."""
    run_dir = tmp_path / "ray-kill"
    try:
        d = ray_deployment(cluster, run_dir, 4, 2, faults={3: "stop-on:Step/dppp/queries"})
        raised: list[BaseException] = []

        def round_() -> None:
            try:
                asyncio.run(dppp_client.run_dppp_session(d.topology, d.client_data, epsilon=10.0, delta=1e-5,
                                                         queries=4, deadline_s=30.0, session_id="killed"))
            except BaseException as error:  # noqa: BLE001 — examined below
                raised.append(error)

        session = threading.Thread(target=round_)
        session.start()
        deadline = time.monotonic() + STARTUP_S
        while not any(h["principal"] == "party/3-4" and h.get("state") == "T" for h in ray_hosts.describe(run_dir)):
            assert time.monotonic() < deadline and session.is_alive(), "the host never received the round"
            time.sleep(1)
        ray_hosts.kill(run_dir, "party/3-4")
        session.join(STARTUP_S)
        assert not session.is_alive()
        assert len(raised) == 1 and isinstance(raised[0], grpc.aio.AioRpcError)
        assert raised[0].code() == grpc.StatusCode.ABORTED
        assert "insufficient noise" in raised[0].details() and "2 of 4" in raised[0].details()
        states = {h["principal"]: h["running"] for h in ray_hosts.describe(run_dir)}
        assert states["party/3-4"] is False and states["party/1-2"] is True
        for identity in (party(1), party(2), AGGREGATOR):
            status = d.call(identity, RoleStub, "GetStatus", common_pb2.Empty(), CLIENT)
            assert "killed" not in status.open_sessions
    finally:
        ray_hosts.down(run_dir)
