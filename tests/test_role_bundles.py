"""One bundle per role identity: what each holds, its modes, the dealer's secrets in no file, and no role
process outliving an interrupted foreground run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509

from launcher.deployment import bundles, processes
from launcher.deployment.keygen import ceremony
from mpdp.cryptocore.paillier import keyfiles, threshold
from mpdp.deployments.topology import Topology
from mpdp.learning import datasets
from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, party
from mpdp.wire.identity import Principal
from tests.waiting import PATIENCE_S, eventually

ROOT = Path(__file__).resolve().parent.parent
BITS = 1024
PARTIES = 5
PER_PROCESS = 2  # party-1-2, party-3-4, party-5: logical hosts and a single party


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """A prepared deployment whose run directory existed with mode 0777, and the dealer's primes."""
    run_dir = tmp_path_factory.mktemp("bundles") / "run"
    run_dir.mkdir()
    os.chmod(run_dir, 0o777)
    (run_dir / "party-5").mkdir()
    os.chmod(run_dir / "party-5", 0o777)
    dealt = []
    generate = threshold.SafePrimes.generate

    def spy(bits):  # the test, not the code, keeps the primes: to look for them in every file written
        primes = generate(bits)
        dealt.append(primes)
        return primes

    hosts = processes.party_hosts(PARTIES, PER_PROCESS)
    threshold.SafePrimes.generate = spy  # type: ignore[method-assign]
    try:
        topology = processes.prepare(run_dir, PARTIES, BITS, datasets.load("breast-cancer"),
                                     processes.loopback_addresses(PARTIES, hosts), seed=3, hosts=hosts)
    finally:
        threshold.SafePrimes.generate = generate  # type: ignore[method-assign]
    return processes.RunDirectory(run_dir), topology, dealt[0]


def _files(directory: Path) -> set[str]:
    return {path.name for path in directory.iterdir()}


def _certificate_names(directory: Path) -> list[str]:
    names = []
    for path in directory.glob("*.pem"):
        cert = x509.load_pem_x509_certificate(path.read_bytes())
        names.append(cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value)
    return sorted(names)


def test_each_bundle_holds_exactly_its_own_files(prepared):
    run, topology, _ = prepared
    common = {"topology.toml", "public_key.json", "ca.pem"}
    def ledgers(*numbers: int) -> set[str]:  # each party's own privacy ledger and its head, next to its data
        return {f"party_{n}.npz.privacy-ledger.jsonl{suffix}" for n in numbers for suffix in ("", ".head")}

    expected = {
        "aggregator": common | {"aggregator_0.pem", "aggregator_0.key"},
        "curator": common | {"curator_0.pem", "curator_0.key", "curator_aux.npz"},
        "client": common | {"client_0.pem", "client_0.key", "client.npz"},
        "party-1-2": common | {"party_1-2.pem", "party_1-2.key", "party_1.npz", "party_2.npz", "key_share_1.json",
                               "key_share_2.json"} | ledgers(1, 2),
        "party-3-4": common | {"party_3-4.pem", "party_3-4.key", "party_3.npz", "party_4.npz", "key_share_3.json",
                               "key_share_4.json"} | ledgers(3, 4),
        "party-5": common | {"party_5.pem", "party_5.key", "party_5.npz", "key_share_5.json"} | ledgers(5),
    }
    assert {p.name for p in run.path.iterdir() if p.is_dir()} == set(expected)
    for name, files in expected.items():
        assert _files(run.path / name) == files, name
        principal = bundles.parse_bundle_name(name)
        # One certificate besides the CA's, naming the bundle's own identity, and one private key.
        assert _certificate_names(run.path / name) == sorted(["mpdp deployment CA", str(principal)])
        assert len(list((run.path / name).glob("*.key"))) == 1


def test_the_aggregators_and_curators_bundles_hold_no_share_no_party_data_no_other_key(prepared):
    run, topology, _ = prepared
    shares = {j: keyfiles.load_key_share(run.bundle_of(party(j)) / keyfiles.share_file_name(j)).secret
              for j in range(1, PARTIES + 1)}
    party_rows = [datasets.load_part(run.bundle_of(party(j)) / f"party_{j}.npz")[0] for j in range(1, PARTIES + 1)]
    for name in ("aggregator", "curator", "client"):
        blob = b"".join(path.read_bytes() for path in (run.path / name).iterdir())
        for secret in shares.values():
            assert format(secret, "x").encode() not in blob
        for rows in party_rows:
            assert rows[0].tobytes() not in blob  # a party's first row, as stored
        assert b"key_share" not in (run.path / name / "topology.toml").read_bytes()
        assert not any(path.suffix == ".npz" and path.name.startswith("party_") for path in (run.path / name).iterdir())
    for j, secret in shares.items():  # a share only in its holder's bundle
        holders = [d.name for d in run.path.iterdir() if d.is_dir()
                   and any(format(secret, "x").encode() in f.read_bytes() for f in d.iterdir())]
        assert holders == [run.bundle_of(party(j)).name]


def test_a_bundles_topology_names_every_address_but_only_its_own_files(prepared):
    run, topology, _ = prepared
    aggregator = Topology.load(run.bundle(AGGREGATOR) / "topology.toml")
    assert aggregator.addresses == topology.addresses and aggregator.key_holders == list(range(1, PARTIES + 1))
    assert all(e.key_share is None and e.data is None and e.certificate is None for e in aggregator.parties)
    assert aggregator.tls_for(AGGREGATOR) is not None
    for other in (CLIENT, CURATOR, party(1)):
        with pytest.raises(ValueError, match="holds no"):
            aggregator.tls_for(other)
    hosted = Topology.load(run.bundle_of(party(3)) / "topology.toml")
    assert [e.identity.id for e in hosted.parties if e.data is not None] == [3, 4]
    assert all(str(path).startswith(str(run.bundle_of(party(3)))) for path in
               (hosted.public_key, hosted.ca_certificate, hosted.entry(party(3)).key, hosted.entry(party(4)).key_share))


def test_every_directory_is_0700_and_every_file_0600_even_where_they_existed_wider(prepared):
    run, _, _ = prepared
    seen = 0
    for directory, subdirectories, files in os.walk(run.path):
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700, directory
        for name in files:
            assert stat.S_IMODE(os.lstat(Path(directory) / name).st_mode) == 0o600, name
            seen += 1
    assert seen > 30


def test_the_dealers_secrets_are_in_no_file_written(prepared):
    run, _, primes = prepared
    p, q = primes.p, primes.q
    n = p * q
    m = ((p - 1) // 2) * ((q - 1) // 2)
    secrets_ = {"p": p, "q": q, "phi": (p - 1) * (q - 1), "m": m, "d": m * pow(m, -1, n)}
    blob = b"".join(path.read_bytes() for path in run.path.rglob("*") if path.is_file())
    assert format(n, "x").encode() in blob  # the search works: the public modulus is there
    for name, value in secrets_.items():
        length = (value.bit_length() + 7) // 8
        for encoding in (str(value).encode(), format(value, "x").encode(), format(value, "X").encode(),
                         value.to_bytes(length, "big"), value.to_bytes(length, "little")):
            assert encoding not in blob, name


def test_keygen_narrows_a_world_writable_key_directory(tmp_path):
    out = tmp_path / "keys"
    out.mkdir()
    os.chmod(out, 0o777)
    ceremony(3, out, BITS)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o700
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in out.glob("key_share_*.json"))


def test_a_bundle_directory_that_is_a_symlink_is_refused(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "aggregator").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="symlink"):
        bundles.private_directory(tmp_path / "run" / "aggregator")


def _umask(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return int(line.split()[1], 8)
    raise AssertionError("no Umask line")


@pytest.mark.network
def test_up_starts_every_role_from_its_own_bundle_under_umask_077(tmp_path):
    run_dir = tmp_path / "run"
    topology = processes.up(run_dir, 2, BITS, datasets.load("breast-cancer"), seed=7, model="logistic-exact",
                            foreground=True)
    try:
        run = processes.RunDirectory(run_dir)
        pids = json.loads(run.processes.read_text())
        for identity, pid in pids.items():
            assert _umask(pid) == 0o077
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            own = run.bundle(Principal.parse(identity))
            assert str(own / "topology.toml").encode() in command
        assert stat.S_IMODE(run.log_file(AGGREGATOR).stat().st_mode) == 0o600
        assert stat.S_IMODE(run.processes.stat().st_mode) == 0o600
        assert topology.tls_for(CLIENT) is not None  # the operator's view: the evaluator runs sessions from it
    finally:
        processes.down(run_dir)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if f"\nPPid:\t{pid}\n" in status and b"serve" in command:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in state


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_an_interrupted_demo_leaves_no_role_process(signum, tmp_path):
    parties = 2
    with (tmp_path / "demo.log").open("w") as log:
        demo = subprocess.Popen([sys.executable, "-m", "launcher.cli", "demo", "--parties", str(parties), "--bits",
                                 str(BITS)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    roles: list[int] = []
    run_dir = None
    try:
        def started() -> bool:
            nonlocal roles
            roles = _children(demo.pid)
            return demo.poll() is not None or len(roles) >= parties + 2
        assert eventually(started, interval=0.5) and demo.poll() is None, (tmp_path / "demo.log").read_text()[-2000:]
        command = Path(f"/proc/{roles[0]}/cmdline").read_bytes().split(b"\0")
        run_dir = Path(command[command.index(b"--topology") + 1].decode()).parent.parent
        processes.wait_healthy(Topology.load(run_dir / "topology.toml"), timeout=PATIENCE_S)
        demo.send_signal(signum)
        demo.wait(timeout=PATIENCE_S)
        assert eventually(lambda: not any(_alive(pid) for pid in roles)), [pid for pid in roles if _alive(pid)]
        if signum != signal.SIGKILL:
            output = (tmp_path / "demo.log").read_text()
            assert demo.returncode == 130 and not run_dir.exists(), (demo.returncode, output[-3000:])  # cleaned up
            assert "mpdp: interrupted" in output and "Traceback" not in output
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
        for pid in roles:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if run_dir is not None and run_dir.exists():  # a killed demo cannot remove its temporary directory
            shutil.rmtree(run_dir)


def test_prepare_refuses_existing_keys_before_writing_anything(prepared):
    run, _, _ = prepared
    before = {path: path.stat().st_mtime_ns for path in run.path.rglob("*") if path.is_file()}
    hosts = processes.party_hosts(PARTIES, PER_PROCESS)
    with pytest.raises(FileExistsError, match="refusing to overwrite"):
        processes.prepare(run.path, PARTIES, BITS, datasets.load("breast-cancer"),
                          processes.loopback_addresses(PARTIES, hosts), seed=4, hosts=hosts)
    assert {path: path.stat().st_mtime_ns for path in run.path.rglob("*") if path.is_file()} == before
