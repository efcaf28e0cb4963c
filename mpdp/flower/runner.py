"""Run the demo federation on Flower's simulation engine in this process (Ray actors for the clients) and hand
back the final model: for the tests, the benchmark and examples/flower."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from mpdp.flower import demo


def simulate(clients: int, rounds: int, fit_workflow=None, mods: list | None = None, cpus: int = 2) -> list[np.ndarray]:
    from flwr.simulation import run_simulation

    finished: list[list[np.ndarray]] = []
    run_simulation(server_app=demo.server_app(rounds, clients, fit_workflow, finished.append),
                   client_app=demo.client_app(mods), num_supernodes=clients,
                   backend_config={"client_resources": {"num_cpus": 1}, "init_args": {"num_cpus": cpus,
                                                                                     "include_dashboard": False}})
    if not finished:
        raise RuntimeError("the simulated run did not finish (see Flower's log above)")
    return finished[0]


def quiet() -> None:
    """Flower logs every message at INFO; the benchmark prints its own figures."""
    logging.getLogger("flwr").setLevel(logging.WARNING)


def bundles_for(root: Path, clients: int, committee: int, threshold: int, bits: int, dealt: bool) -> Path:
    """Fresh identities for `clients` parties; with `dealt`, a key generated here and written into the bundles
    (a provisioned key; without it the committee generates one over Flower messages)."""
    from mpdp.cryptocore.paillier.threshold import generate_threshold_key
    from mpdp.flower import bundles

    bundles.provision(root, clients)
    if dealt:
        public, shares = generate_threshold_key(bits, threshold, committee)
        bundles.write_key(root, clients, public, shares)
    return root
