"""The link table of an emulated network: which relay address each role host dials to reach each peer host.

Written by `mpdp up --network` (launcher.deployment.network) as JSON, and named to every process of the
deployment by the MPDP_NETWORK environment variable (role servers inherit it from `up`; the CLI's `run` sets
it from the run directory). `route` is the one place a channel's address is chosen; without a table it is the
peer's own address.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from mpdp.wire.profiles import NetworkProfile

ENVIRONMENT = "MPDP_NETWORK"


def write(path: Path, profile: NetworkProfile, emulator: str, links: dict[tuple[str, str], str],
          armed: bool = False) -> None:
    """The table; `armed` once the deployment's roles serve at the addresses its relays lead to (until then —
    the key ceremony of `up`, whose holders listen elsewhere — every process dials its peers directly)."""
    table = {"profile": profile.to_json(), "emulator": emulator, "armed": armed,
             "links": [{"from": source, "to": target, "address": address}
                       for (source, target), address in sorted(links.items())]}
    Path(path).write_text(json.dumps(table, indent=1) + "\n")


def _read(path: str) -> dict:
    table = json.loads(Path(path).read_text())
    table["routes"] = {(link["from"], link["to"]): link["address"] for link in table["links"]}
    return table


@lru_cache(maxsize=4)
def _armed(path: str) -> dict:
    return _read(path)


def forget() -> None:
    """Read the table again at next use (its profile was changed)."""
    _armed.cache_clear()


def table() -> dict | None:
    """The active link table, or None on a plain (loopback) deployment. An armed table is read once; one not yet
    armed at every call, so that a process never keeps it."""
    path = os.environ.get(ENVIRONMENT)
    if not path:
        return None
    return _armed(path) if _read(path).get("armed") else _read(path)


def route(source: object, target: object, address: str) -> str:
    """The address `source` dials to reach `target` (principals, compared by their names)."""
    active = table()
    if active is None or not active.get("armed"):
        return address
    return active["routes"].get((str(source), str(target)), address)


def describe() -> dict:
    """The network a report was measured under: its profile and the emulator that imposed it."""
    active = table()
    if active is None:
        return {"profile": {"name": "loopback", "latency_ms": 0.0, "bandwidth_mbit": None, "loss": 0.0},
                "emulator": "none"}
    return {"profile": active["profile"], "emulator": active["emulator"]}
