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

from launcher.compose import VOLUME, render
from launcher.processes import free_port

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILE = ROOT / "docker-compose.yml"


def test_committed_compose_file_is_the_generators_output():
    assert COMPOSE_FILE.read_text() == render(5), "regenerate it: mpdp compose --parties 5 --out docker-compose.yml"


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


def _localise(command: list[str], deployment: Path, addresses: dict[str, str]) -> list[str]:
    """The compose command with the volume path and service hosts replaced for one machine.

    Each service name becomes its own loopback address (127.0.0.2, 127.0.0.3, …), the servers
    bind those addresses instead of 0.0.0.0, and the key is 1024 bits to keep the test fast."""
    text = " \0 ".join(command).replace(VOLUME, str(deployment))
    for service, address in addresses.items():
        text = text.replace(f"={service}:50051", f"={address}")
    words = text.split(" \0 ")
    if "--listen-host" in words:
        index = words.index("--listen-host")
        del words[index:index + 2]
        words += ["--bits", "1024"]
    if words[0] == "mpdp":
        words = [sys.executable, "-m", "launcher.cli", *words[1:]]
    if words[:2] == ["sh", "-c"]:
        words[2] = words[2].replace("mpdp ", f"{sys.executable} -m launcher.cli ")
    return words


def test_compose_commands_run_dppp_and_pathak_with_every_role_on_its_own_address(tmp_path):
    services = yaml.safe_load(COMPOSE_FILE.read_text())["services"]
    roles = [name for name in services if name not in ("keygen", "demo")]
    addresses = {name: f"127.0.0.{index}:{free_port(f'127.0.0.{index}')}" for index, name in enumerate(roles, start=2)}
    deployment = tmp_path / "deployment"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    keygen = subprocess.run(_localise(services["keygen"]["command"], deployment, addresses), cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert keygen.returncode == 0, keygen.stderr
    processes = []
    try:
        for name in roles:
            log = (tmp_path / f"{name}.log").open("w")
            processes.append(subprocess.Popen(_localise(services[name]["command"], deployment, addresses), cwd=ROOT,
                                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        for name in roles:  # the compose healthchecks, run as compose would
            check = _localise(services[name]["healthcheck"]["test"][1:], deployment, addresses)
            deadline = time.monotonic() + 120
            while subprocess.run(check, cwd=ROOT, env=env, capture_output=True).returncode != 0:
                assert time.monotonic() < deadline, (tmp_path / f"{name}.log").read_text()[-2000:]
                time.sleep(0.5)
        demo = subprocess.run(_localise(services["demo"]["command"], deployment, addresses), cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)
        assert demo.returncode == 0, demo.stderr[-3000:]
        assert "DPPP on breast-cancer" in demo.stdout and "Pathak–Rane–Raj on breast-cancer" in demo.stdout
        listening = subprocess.run(["ss", "-ltn"], capture_output=True, text=True).stdout
        for address in addresses.values():  # each role on its own address (gRPC may show it IPv4-mapped)
            host, port = address.rsplit(":", 1)
            assert address in listening or f"[::ffff:{host}]:{port}" in listening
        topology = (deployment / "topology.toml").read_text()
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
