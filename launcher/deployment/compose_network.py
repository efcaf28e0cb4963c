"""`mpdp compose --network PROFILE`: every link between the role containers, and from `demo` to them, under one
network profile, imposed by the relay of `mpdp up --network` (mpdp.wire.relay) in a container of its own.

The compose file gains one `relay` service: its own uid, no bundle (it holds no key: TLS runs end to end
through it), one listening port per directed link — the links `up` makes for the same roles
(`network.directed_links`), each at `relay:PORT` instead of a loopback port. The link table, `network.json`,
is written beside the compose file and mounted read-only into the relay, every role and `demo`, whose
MPDP_NETWORK names it (mpdp.wire.links): a role dials a peer at the relay's port for that link, the relay
connects on to the peer's service name, and the caller still checks the certificate of the role it meant
(mpdp.wire.tls). The table is armed from the start: the roles serve at the addresses the relays lead to.
The key one-shots (`keygen`, or `prepare`, the holders' ceremony and `open-keygen`) get no table and run on
the plain compose network, as `up`'s ceremony runs before its table is armed. The session reports of `demo`
record the profile and the emulator (launcher.common.session_report).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from launcher.deployment import network
from launcher.deployment.compose_names import PORT, service_name
from mpdp.wire import links
from mpdp.wire.identity import Principal
from mpdp.wire.profiles import PROFILES, NetworkProfile

SERVICE = "relay"
LINKS_FILE = network.LINKS_FILE  # beside the compose file
MOUNT = "/etc/mpdp/network.json"
RELAY_UID = 10012  # none of the roles' (launcher.deployment.compose): the relay reads no bundle
PORT_BASE = 51000
PORT_LAST = 65535
READY_FILE = "/tmp/relays-ready"  # the relay's health: every link's relay listens
EMULATOR = (f"{network.EMULATOR} (user-space, one per directed link, in the compose project's `{SERVICE}` "
            "container; tc netem not used)")


def link_table(parties: int) -> dict[tuple[str, str], str]:
    """Each directed link between two role hosts (the same as `up`'s for these roles) → its port on the relay."""
    directed = network.directed_links(parties)
    if PORT_BASE + len(directed) - 1 > PORT_LAST:
        raise ValueError(f"{parties} parties need {len(directed)} links: more than the relay's ports "
                         f"{PORT_BASE}–{PORT_LAST}")
    return {link: f"{SERVICE}:{PORT_BASE + number}" for number, link in enumerate(directed)}


def write(path: Path, parties: int, profile: NetworkProfile) -> None:
    """The link table, readable by every container's uid (it holds no secret; the CLI's umask would make it
    the operator's alone)."""
    links.write(path, profile, EMULATOR, link_table(parties), armed=True)
    os.chmod(path, 0o644)


def flags(profile: NetworkProfile) -> str:
    """The `mpdp compose` options that make `profile`, for the generated file's first line."""
    if PROFILES.get(profile.name) == profile:
        return f" --network {profile.name}"
    text = f" --latency {profile.latency_ms:g}ms"
    if profile.bandwidth_mbit is not None:
        text += f" --bandwidth {profile.bandwidth_mbit:g}mbit"
    if profile.loss:
        text += f" --loss {100 * profile.loss:g}%"
    return text


def header(profile: NetworkProfile | None) -> list[str]:
    """The file's comment lines on its links (none on a plain compose network)."""
    if profile is None:
        return []
    return [f"# Every link between the roles, and from demo to them, goes through `{SERVICE}` under "
            f"{profile.describe()};",
            f"# its link table {LINKS_FILE} lies beside this file (docs/networks.md)."]


def mount() -> list[str]:
    """A volume line (under the service's `volumes:`) for the link table."""
    return [f"      - ./{LINKS_FILE}:{MOUNT}:ro"]


def environment(base: list[str]) -> list[str]:
    """A service's own `environment:`: x-mpdp's (`base`, its lines; a service's mapping replaces the anchor's
    whole) and MPDP_NETWORK."""
    return ["    environment:", *[f"  {line}" for line in base], f"      {links.ENVIRONMENT}: {MOUNT}"]


def service() -> list[str]:
    """The `relay` service: the image's own relay code, as its own uid, with the link table and nothing else."""
    command = ["python", "-m", "launcher.deployment.compose_network", MOUNT]
    return [
        f"  {SERVICE}:",
        "    <<: *mpdp",
        "    command: [" + ", ".join(f'"{word}"' for word in command) + "]",
        f'    user: "{RELAY_UID}"',
        "    volumes:",
        *mount(),
        "    healthcheck:",
        f'      test: ["CMD", "test", "-f", "{READY_FILE}"]',
        "      interval: 2s",
        "      retries: 30",
    ]


def depends() -> list[str]:
    """Under `demo`'s `depends_on:`: the relay listens before the first session."""
    return [f"      {SERVICE}:", "        condition: service_healthy"]


async def _resolve(target: str) -> tuple[str, int]:
    """A link's target host → its service on the compose network (every compose role serves at PORT)."""
    principal = Principal.parse(target)
    return service_name(principal.role, principal.first), PORT


def _ready() -> None:
    Path(READY_FILE).write_text("ready\n")


def main(table_path: Path) -> None:
    Path(READY_FILE).unlink(missing_ok=True)  # a restarted container is not healthy until it listens again
    asyncio.run(network.serve(table_path, _resolve, listen_host="0.0.0.0", ready=_ready))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
