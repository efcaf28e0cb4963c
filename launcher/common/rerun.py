"""The command a fix line suggests: `mpdp run` again with other options, as the user can type it where the run
came from. In compose the client is a container (`MPDP_DEPLOYMENT=compose`, set by the generated file), so the
command runs in a new one of the demo service, on the topology and client data it was given; elsewhere it names
the deployment as the run did (its `--topology`, or a run directory other than the default)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

COMPOSE = "compose"  # MPDP_DEPLOYMENT's value in a compose deployment (launcher/deployment/compose.py)


def command(protocol: str, args, options: str) -> str:
    """`mpdp run PROTOCOL … OPTIONS`, in backquotes, for the deployment `args` (a `run`'s) addressed."""
    from launcher.common.options import DEFAULT_RUN_DIR

    topology, client_data = getattr(args, "topology", None), getattr(args, "client_data", None)
    run_dir = getattr(args, "run_dir", None)
    where: list[str] = []
    if topology is not None:
        where += ["--topology", str(topology)]
        if client_data is not None:
            where += ["--client-data", str(client_data)]
    elif run_dir is not None and Path(run_dir) != DEFAULT_RUN_DIR:
        where += ["--run-dir", str(run_dir)]
    line = " ".join(["mpdp", "run", protocol, *map(shlex.quote, where), options]).rstrip()
    if os.environ.get("MPDP_DEPLOYMENT") == COMPOSE:
        line = f"docker compose run --rm demo {line}"
    return f"`{line}`"
