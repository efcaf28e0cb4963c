"""`mpdp up --metrics-port BASE`: every role host serves Prometheus metrics on BASE + its offset (the aggregator
BASE, the curator BASE + 1, the host of parties f… BASE + 1 + f), and the run directory gets a file_sd target
list Prometheus reads (`file_sd_configs`), one target per role host, labelled with its principal."""

from __future__ import annotations

import json
import os
from pathlib import Path

TARGETS_FILE = "prometheus-targets.json"


def ask(base: int | None, ray: bool) -> None:
    """Before the roles start: refuse in one line what cannot be served; tell the role processes the base."""
    if base is None:
        return
    from mpdp.observe.role import BASE_VARIABLE, check_metrics_port

    if ray:
        raise ValueError("--metrics-port is for role processes on this machine, not Ray actors")
    if not 0 < base < 65536 - 1000:
        raise ValueError("--metrics-port takes a base port between 1 and 64535")
    check_metrics_port(base)
    os.environ[BASE_VARIABLE] = str(base)  # inherited by every role process `up` starts


def announce(topology, run_dir: Path, base: int | None) -> list[str]:
    """The endpoints, written as Prometheus file_sd targets beside the topology; the lines to print."""
    if base is None:
        return []
    from mpdp.observe.role import offset

    targets, lines = [], []
    for entry in topology.host_entries:
        host = entry.address.rpartition(":")[0] or "127.0.0.1"
        port = base + offset(str(entry.principal))
        targets.append({"targets": [f"{host}:{port}"], "labels": {"principal": str(entry.principal)}})
        lines.append(f"  metrics {str(entry.principal):<14} http://{host}:{port}/metrics")
    path = Path(run_dir) / TARGETS_FILE
    path.write_text(json.dumps(targets, indent=2) + "\n")
    lines.append(f"  Prometheus targets: {path} (file_sd_configs; docs/observe.md)")
    return lines
