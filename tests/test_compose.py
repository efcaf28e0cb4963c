"""The compose deployment: the committed file, its validity, and its commands run across hosts."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from launcher.deployment.children import free_port
from launcher.deployment.compose import BUNDLE, BUNDLES, bundle_name, render, volume_name

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILE = ROOT / "docker-compose.yml"


def test_committed_compose_file_is_the_generators_output():
    assert COMPOSE_FILE.read_text() == render(5), "regenerate it: mpdp compose --parties 5 --keygen dealer --out docker-compose.yml"


def test_the_dockerfile_builds_with_docker_20_10_and_ships_every_package():
    """No heredoc (BuildKit's Dockerfile 1.4, Docker ≥ 23), and every package pyproject installs is in the build
    context: a role imports all four protocols."""
    import tomllib

    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "<<" not in dockerfile and "COPY . ." in dockerfile
    ignored = {line.strip().rstrip("/") for line in (ROOT / ".dockerignore").read_text().splitlines()}
    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {pattern.rstrip("*") for pattern in include}
    assert packages and not packages & ignored and all((ROOT / package).is_dir() for package in packages)


def test_docker_compose_accepts_the_file():
    if shutil.which("docker-compose") is None:
        pytest.skip("Debian's docker-compose is not installed (.ci/run installs it where it can)")
    result = subprocess.run(["docker-compose", "-f", str(COMPOSE_FILE), "config", "-q"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_each_service_mounts_only_its_own_bundle_as_its_own_uid():
    """keygen alone sees every bundle; a role's container holds one volume, its own, and runs as its own uid
    (none is root or shared), so the aggregator's and Charlie's hold no key share and no party data."""
    compose = yaml.safe_load(COMPOSE_FILE.read_text())
    services = {name: service for name, service in compose["services"].items() if "profiles" not in service}
    volumes = set(compose["volumes"])
    assert "volumes" not in compose["x-mpdp"]
    assert sorted(services["keygen"]["volumes"]) == sorted(f"{volume_name(s)}:{BUNDLES}/{bundle_name(s)}"
                                                            for s in services if s != "keygen")
    uids = {}
    for name, service in services.items():
        if name == "keygen":
            continue
        assert service["volumes"] == [f"{volume_name(name)}:{BUNDLE}"], name
        assert volume_name(name) in volumes and "deployment" not in volumes
        uids[name] = service["user"]
    assert len(set(uids.values())) == len(uids) and "0" not in uids.values()
    owners = services["keygen"]["command"]
    for name, user in uids.items():  # keygen hands each bundle to the uid its service runs as
        assert f"{bundle_name(name)}={user}" in owners
    for name in ("aggregator", "curator"):
        assert bundle_name(name) == name and not any(name in v for v in services["party-1"]["volumes"])


def test_the_dealer_files_keygen_deals_the_key_in_seconds():
    """prepare's default (3 or more parties) is the holders' ceremony, which keygen would run inside its one
    container, every share in it, for minutes at 2048 bits: the dealer's file must ask prepare for the dealer."""
    from launcher.cli import build_parser
    from launcher.common.deployment_options import keygen_method

    for parties in (3, 5):
        command = yaml.safe_load(render(parties))["services"]["keygen"]["command"]
        args = build_parser("prepare").parse_args(command[1:])
        assert keygen_method(args) == "dealer"
    command = yaml.safe_load(render(5, keygen="distributed"))["services"]["prepare"]["command"]
    assert keygen_method(build_parser("prepare").parse_args(command[1:])) == "deferred"


def _localise(command: list[str], service: str, deployment: Path, addresses: dict[str, str]) -> list[str]:
    """The compose command of `service` with its bundle paths and service hosts replaced for one machine.

    keygen's /bundles becomes `deployment`, a role's /bundle its own directory there; each service name
    becomes its own loopback address (127.0.0.2, …), the servers bind those addresses instead of 0.0.0.0,
    `--owner` is dropped (giving bundles to other uids needs root) and the key is 1024 bits."""
    text = " \0 ".join(command).replace(BUNDLES, str(deployment))
    text = text.replace(BUNDLE, str(deployment / bundle_name(service)))
    for name, address in addresses.items():
        text = text.replace(f"={name}:50051", f"={address}")
    words = text.split(" \0 ")
    while "--owner" in words:
        index = words.index("--owner")
        del words[index:index + 2]
    if "--listen-host" in words:
        index = words.index("--listen-host")
        del words[index:index + 2]
        words += ["--bits", "1024"]
    if words[0] == "mpdp":
        words = [sys.executable, "-m", "launcher.cli", *words[1:]]
    if words[:2] == ["sh", "-c"]:
        words[2] = words[2].replace("mpdp ", f"{sys.executable} -m launcher.cli ")
    return words


def test_compose_commands_run_every_protocol_twice_with_every_role_on_its_own_address(tmp_path):
    """The compose file's commands on one machine, each role on its own loopback address: the demo runs all four
    protocols; then, as a second `docker compose run --rm demo` does, keygen runs again and keeps the deployment's
    keys (the running roles' certificates and key stay valid), and the demo runs again within the budget."""
    services = yaml.safe_load(COMPOSE_FILE.read_text())["services"]
    roles = [name for name, service in services.items() if name not in ("keygen", "demo") and "profiles" not in service]
    addresses = {name: f"127.0.0.{index}:{free_port(f'127.0.0.{index}')}" for index, name in enumerate(roles, start=2)}
    deployment = tmp_path / "deployment"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    keygen = subprocess.run(_localise(services["keygen"]["command"], "keygen", deployment, addresses), cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert keygen.returncode == 0, keygen.stderr
    processes = []
    try:
        for name in roles:
            log = (tmp_path / f"{name}.log").open("w")
            processes.append(subprocess.Popen(_localise(services[name]["command"], name, deployment, addresses), cwd=ROOT,
                                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        for name in roles:  # the compose healthchecks, run as compose would
            check = _localise(services[name]["healthcheck"]["test"][1:], name, deployment, addresses)
            deadline = time.monotonic() + 120
            while subprocess.run(check, cwd=ROOT, env=env, capture_output=True).returncode != 0:
                assert time.monotonic() < deadline, (tmp_path / f"{name}.log").read_text()[-2000:]
                time.sleep(0.5)
        demo = subprocess.run(_localise(services["demo"]["command"], "demo", deployment, addresses), cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)
        assert demo.returncode == 0, demo.stderr[-3000:]
        for name in ("DPPP", "Pathak–Rane–Raj", "Hamm–Cao–Belkin", "Du–Li–Li"):
            assert f"{name} on breast-cancer" in demo.stdout, demo.stdout[-3000:]
        keys = {path: path.read_bytes() for path in deployment.rglob("*") if path.suffix in (".json", ".pem", ".key")}
        again = subprocess.run(_localise(services["keygen"]["command"], "keygen", deployment, addresses), cwd=ROOT,
                               env=env, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0 and "kept" in again.stdout, again.stderr
        assert all(path.read_bytes() == data for path, data in keys.items() if path.name != "ledger.json")
        demo = subprocess.run(_localise(services["demo"]["command"], "demo", deployment, addresses), cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)
        assert demo.returncode == 0, demo.stderr[-3000:]
        listening = subprocess.run(["ss", "-ltn"], capture_output=True, text=True).stdout
        for address in addresses.values():  # each role on its own address (gRPC may show it IPv4-mapped)
            host, port = address.rsplit(":", 1)
            assert address in listening or f"[::ffff:{host}]:{port}" in listening
        topology = (deployment / "client" / "topology.toml").read_text()
        assert "insecure" not in topology and "ca_certificate" in topology  # mutual TLS
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def test_distributed_keygen_runs_in_the_holders_containers_each_with_its_own_bundle_only():
    """`--keygen distributed`: prepare deals no key; holder-J runs the ceremony as party J's uid with party J's
    volume alone and is reachable as party-J; open-keygen holds no party's volume; every role waits for the key."""
    compose = yaml.safe_load(render(5, "distributed", 1024))
    services = compose["services"]
    assert "keygen" not in services
    assert services["prepare"]["command"][services["prepare"]["command"].index("--keygen") + 1] == "deferred"
    for number in range(1, 6):
        holder, party = services[f"holder-{number}"], services[f"party-{number}"]
        assert holder["volumes"] == party["volumes"] == [f"{volume_name(f'party-{number}')}:{BUNDLE}"]
        assert holder["user"] == party["user"] != "0"
        assert holder["networks"]["mpdp"]["aliases"] == [f"party-{number}"]
        assert holder["command"][-2:] == ["--keygen-only", "--once"]
        assert list(party["depends_on"]) == [f"holder-{number}"]
    opener = services["open-keygen"]
    assert not any("party" in volume for volume in opener["volumes"])
    assert [v.split(":")[0] for v in opener["volumes"]] == [volume_name(s) for s in ("demo", "aggregator", "curator")]
    for name in ("aggregator", "curator"):
        assert list(services[name]["depends_on"]) == ["open-keygen"]
    dealer = yaml.safe_load(render(5))["services"]
    assert "holder-1" not in dealer and "open-keygen" not in dealer and "--keygen" in dealer["keygen"]["command"]


def test_parties_beyond_the_key_holders_get_the_public_key_and_nothing_else():
    """At most 16 parties hold shares: with the holders' own ceremony, party 17 on takes part in none, so the
    public key reaches it through a volume holding only that key, read-only; no one-shot mounts its bundle."""
    compose = yaml.safe_load(render(18, "distributed", 1024))
    services, volumes = compose["services"], set(compose["volumes"])
    assert "holder-17" not in services and "holder-16" in services
    for number in (17, 18):
        party = services[f"party-{number}"]
        assert party["volumes"] == [f"{volume_name(f'party-{number}')}:{BUNDLE}", "public-key:/public:ro"]
        assert list(party["depends_on"]) == ["open-keygen"]
        assert party["command"][:2] == ["sh", "-c"] and party["command"][2].startswith("cp /public/public_key.json ")
    opener = services["open-keygen"]
    assert "public-key:/bundles/public-key" in opener["volumes"]
    assert not any("party" in volume for volume in opener["volumes"])
    assert opener["command"][-1] == "/bundles/public-key/public_key.json" and "public-key" in volumes
    assert "public-key" not in render(16, "distributed", 1024)

