"""`mpdp compose --network`: the relay service, each role's link table, and the plain file when no profile asks for
one — the generated files, with no Docker (docs/networks.md has the run on a real engine)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from launcher.cli import main
from launcher.deployment import compose_network, network
from launcher.deployment.children import free_port
from launcher.deployment.compose import PORT, render, service_name
from mpdp.wire import links
from mpdp.wire.profiles import PROFILES, resolve

PARTIES = 3
ROLES = ["aggregator", "curator", *[f"party-{number}" for number in range(1, PARTIES + 1)]]
PRINCIPALS = {"aggregator": "aggregator/0", "curator": "curator/0", "demo": "client/0",
              **{f"party-{number}": f"party/{number}" for number in range(1, PARTIES + 1)}}


def _compose(tmp_path: Path, *options: str) -> tuple[int, dict, Path]:
    out = tmp_path / "docker-compose.yml"
    code = main(["compose", "--parties", str(PARTIES), "--bits", "1024", "--out", str(out), *options])
    return code, yaml.safe_load(out.read_text()) if out.exists() else {}, tmp_path / compose_network.LINKS_FILE


def test_without_a_profile_the_file_is_the_plain_one_and_no_table_is_written(tmp_path):
    code, _, table = _compose(tmp_path)
    plain = (tmp_path / "docker-compose.yml").read_text()
    assert code == 0 and plain == render(PARTIES, "distributed", 1024) and not table.exists()
    code, _, table = _compose(tmp_path, "--network", "loopback")  # no delay, no relay
    assert code == 0 and (tmp_path / "docker-compose.yml").read_text() == plain and not table.exists()


def test_wan_sends_every_link_through_the_relay_service(tmp_path, monkeypatch):
    code, compose, table_path = _compose(tmp_path, "--network", "wan")
    assert code == 0
    services = compose["services"]
    relay = services[compose_network.SERVICE]
    mount = f"./{compose_network.LINKS_FILE}:{compose_network.MOUNT}:ro"
    # The relay runs the image's relay code as a uid of its own, with the link table and no bundle: no secret.
    assert relay["command"] == ["python", "-m", "launcher.deployment.compose_network", compose_network.MOUNT]
    assert relay["user"] == str(compose_network.RELAY_UID) and relay["volumes"] == [mount]
    assert services["demo"]["depends_on"][compose_network.SERVICE] == {"condition": "service_healthy"}
    for name in [*ROLES, "demo"]:
        assert mount in services[name]["volumes"]
        assert services[name]["environment"][links.ENVIRONMENT] == compose_network.MOUNT
        # the service's own environment replaces the anchor's: it must still hold all of it
        assert {**compose["x-mpdp"]["environment"], links.ENVIRONMENT: compose_network.MOUNT} == \
            services[name]["environment"]
    for name in ("prepare", "open-keygen", *[f"holder-{n}" for n in range(1, PARTIES + 1)]):
        # the key ceremony runs on the plain network, as up's does
        assert links.ENVIRONMENT not in services[name]["environment"] and mount not in services[name]["volumes"]

    table = json.loads(table_path.read_text())
    assert table_path.stat().st_mode & 0o777 == 0o644  # every container's uid reads it (the CLI's umask is 077)
    assert table["armed"] and table["profile"] == PROFILES["wan"].to_json()
    assert table["emulator"].startswith(f"{network.EMULATOR} ")
    ports = [int(link["address"].removeprefix(f"{compose_network.SERVICE}:")) for link in table["links"]]
    assert len(set(ports)) == len(ports) and all(port >= compose_network.PORT_BASE for port in ports)

    # Each role (and the client) dials each peer at the relay's port for that directed link, and nothing else.
    monkeypatch.setenv(links.ENVIRONMENT, str(table_path))
    links.forget()
    routes = {(link["from"], link["to"]): link["address"] for link in table["links"]}
    for source in [*ROLES, "demo"]:
        for target in ROLES:
            me, peer = PRINCIPALS[source], PRINCIPALS[target]
            direct = f"{target}:{PORT}"
            expected = direct if me == peer else routes[(me, peer)]
            assert links.route(me, peer, direct) == expected
            assert expected != direct or me == peer
    # What a session report records (launcher/common/session_report.py).
    assert links.describe() == {"profile": PROFILES["wan"].to_json(), "emulator": table["emulator"]}
    links.forget()


def test_the_relays_link_table_is_the_one_up_makes_for_these_roles(tmp_path):
    _, _, table_path = _compose(tmp_path, "--network", "wan")
    composed = json.loads(table_path.read_text())
    up_dir = tmp_path / "up"
    up_dir.mkdir()
    planned = json.loads(network.plan(up_dir, PROFILES["wan"], PARTIES).read_text())  # what `up --network wan` writes
    assert [(link["from"], link["to"]) for link in composed["links"]] == \
        [(link["from"], link["to"]) for link in planned["links"]]
    assert composed["profile"] == planned["profile"]
    # the relay leads each link to its target's compose service
    for link in composed["links"]:
        host, port = asyncio.run(compose_network._resolve(link["to"]))
        role, _, number = link["to"].partition("/")
        assert (host, port) == (service_name(role, int(number)), PORT)


def test_explicit_figures_are_ups_options_and_are_recorded(tmp_path):
    code, compose, table_path = _compose(tmp_path, "--latency", "10ms", "--bandwidth", "5mbit", "--loss", "1%")
    table = json.loads(table_path.read_text())
    expected = resolve(None, "10ms", "5mbit", "1%")
    assert code == 0 and table["profile"] == expected.to_json()
    first = (tmp_path / "docker-compose.yml").read_text().splitlines()[0]
    assert "--latency 10ms --bandwidth 5mbit --loss 1%" in first
    assert compose_network.flags(PROFILES["wan"]) == " --network wan"


@pytest.mark.parametrize("options, says", [
    (["--network", "moon"], "mpdp: error: unknown network profile 'moon'; choose from loopback, lan, wan, mobile"),
    (["--latency", "3 parsecs"], "mpdp: error: latency '3 parsecs'"),
])
def test_a_bad_profile_is_one_line_and_writes_nothing(tmp_path, capsys, options, says):
    code, _, table = _compose(tmp_path, *options)
    err = capsys.readouterr().err
    assert code != 0 and len(err.strip().splitlines()) == 1 and err.startswith(says)
    assert not (tmp_path / "docker-compose.yml").exists() and not table.exists()


def test_a_profile_needs_a_file_to_write_its_table_beside(capsys):
    assert main(["compose", "--parties", str(PARTIES), "--network", "wan"]) != 0
    assert "give --out FILE" in capsys.readouterr().err


def test_the_relay_listens_on_every_interface_for_the_name_its_peers_dial(tmp_path):
    """The relay service's code in one process: a link addressed `relay:PORT` is served on the given listen host,
    and the bytes reach the target the compose resolution names and come back unchanged."""
    async def scenario() -> bytes:
        async def echo(reader, writer):
            writer.write(await reader.read(100))
            await writer.drain()
            writer.close()

        target = await asyncio.start_server(echo, "127.0.0.1", 0)
        target_port = target.sockets[0].getsockname()[1]
        relay_port = free_port()
        table = tmp_path / "network.json"
        links.write(table, resolve(None, "5ms"), compose_network.EMULATOR,
                    {("client/0", "party/1"): f"{compose_network.SERVICE}:{relay_port}"}, armed=True)
        ready = asyncio.Event()

        async def to_target(name: str) -> tuple[str, int]:
            assert name == "party/1"
            return "127.0.0.1", target_port

        serving = asyncio.create_task(network.serve(table, to_target, listen_host="127.0.0.1", ready=ready.set))
        await asyncio.wait_for(ready.wait(), 10)
        reader, writer = await asyncio.open_connection("127.0.0.1", relay_port)
        writer.write(b"ciphertext")
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(100), 10)
        writer.close()
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        target.close()
        return answer

    assert asyncio.run(scenario()) == b"ciphertext"


def test_docker_compose_accepts_the_networked_file(tmp_path):
    if shutil.which("docker-compose") is None:
        pytest.skip("Debian's docker-compose is not installed (.ci/run installs it where it can)")
    _compose(tmp_path, "--network", "wan")
    result = subprocess.run(["docker-compose", "-f", str(tmp_path / "docker-compose.yml"), "config", "-q"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("parties, keygen", [(2, "dealer"), (5, "dealer"), (5, "distributed")])
def test_the_header_command_remakes_the_same_file(tmp_path, parties, keygen):
    """The first line names the command that wrote the file, `--keygen` included where it is not the default."""
    from launcher.cli import main
    from launcher.deployment.compose import render

    text = render(parties, keygen)
    command = text.splitlines()[0].split("`")[1].split()[1:]  # `mpdp compose …` without the program
    out = tmp_path / "again.yml"
    assert main([*command, "--out", str(out)]) == 0
    assert out.read_text() == text
