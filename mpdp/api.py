"""The Python API for notebooks: the same real processes as `mpdp up`, the same report as `mpdp run … --format
json`, everything stopped on exit or error.

    with mpdp.deploy(parties=5, dataset="breast-cancer") as d:
        report = d.run("dppp", epsilon=1)
        report.test_metrics["balanced_accuracy"], report.baselines["tuned"], report.warnings
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mpdp.cryptocore.keys.key_sizes import DEFAULT_KEY_BITS
from mpdp.wire.fork_handling import disable_grpc_fork_handlers

__all__ = ["Deployment", "Report", "deploy"]


class Report(dict):
    """A session's report: the CLI's JSON object (a dict), with typed access to the parts a reader wants."""

    @property
    def protocol(self) -> str:
        return str(self["protocol"])

    @property
    def test_metrics(self) -> dict[str, float]:
        return dict(self["result"]["test_metrics"])

    @property
    def baselines(self) -> dict[str, Any]:
        return dict(self["baselines"])

    @property
    def warnings(self) -> list[str]:
        return list(self.get("warnings", []))

    @property
    def privacy(self) -> dict[str, Any]:
        return dict(self["privacy"])


class Deployment:
    """A running deployment: `run` one protocol session against it."""

    def __init__(self, run_dir: Path, topology):
        self.run_dir = run_dir
        self.topology = topology

    def run(self, protocol: str, repeat: int = 1, anyway: bool = False, **options: Any) -> Report:
        """One session (R with `repeat`) of `protocol` with its `run` options as keywords (`lambda_` or
        `regularization` for --lambda); the CLI's defaults for the rest. Stops before any party spends where the
        check before spending says it will not learn (a ValueError naming the cause and the fix), unless
        `anyway`."""
        from launcher.common import client, session_report
        from launcher.deployment.processes import RunDirectory
        from launcher.registry import PROTOCOLS

        if protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
        entry = PROTOCOLS[protocol]
        values: dict[str, Any] = {}
        for option in entry.options():
            flag = option.keywords.get("action") == "store_true"
            values[option.destination] = option.keywords.get("default", False if flag else None)
        if "lambda_" in options:
            options["regularization"] = options.pop("lambda_")
        unknown = sorted(set(options) - set(values))
        if unknown:
            raise ValueError(f"{protocol} has no option {', '.join(unknown)}; its options: {', '.join(sorted(values))}")
        values.update(options)
        args = argparse.Namespace(**values, repeat=repeat, run_dir=self.run_dir, topology=None, client_data=None,
                                  dataset=None, split=None, parties=None, report=None, anyway=anyway)
        client_data = client.load_client_data(RunDirectory(self.run_dir).client_data)
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # a script: the session runs its own event loop here
            return Report(session_report.run(entry, args, self.topology, client_data))
        # A notebook's kernel already runs an event loop in this thread: the session's runs in a thread of its own.
        with ThreadPoolExecutor(1, thread_name_prefix="mpdp-session") as worker:
            return Report(worker.submit(session_report.run, entry, args, self.topology, client_data).result())

    def export(self, report: Report, path: str | Path) -> str:
        """Write the report's released model (`mpdp export`) to `path` (.joblib or .pkl) as a scikit-learn
        Pipeline that predicts on raw rows; raises ValueError when it would not give the report's test accuracy."""
        from launcher.commands import export
        from launcher.common import client
        from launcher.deployment.processes import RunDirectory

        return export.write(report, client.load_client_data(RunDirectory(self.run_dir).client_data), Path(path))


@contextmanager
def deploy(parties: int = 5, dataset: str = "breast-cancer", bits: int = DEFAULT_KEY_BITS,
           run_dir: str | Path | None = None, label: str | None = None, schema: str | Path | None = None,
           seed: int | None = None, model: str | None = None, teacher: str | None = None,
           parties_per_process: int = 1,
           intercept: bool = True, budget=None, single_operator: bool = False,
           **dataset_options: Any) -> Iterator[Deployment]:
    """Start every role as its own process (as `mpdp up`; `budget`: each party's mpdp.privacy.ledger.Budget, the
    ledger's default when None), yield the deployment, stop everything on exit (the roles also die with this
    process). `teacher`: every party's local model (DPPP's and Hamm's teachers) as `module:Class`, a scikit-learn
    classifier each party imports and fits with its defaults on its own rows (as `mpdp up --teacher`)."""
    disable_grpc_fork_handlers()  # before the launcher's modules import grpc: this process starts the roles
    from launcher.common.data_report import check_parties
    from launcher.deployment import processes
    from mpdp.learning import datasets, models

    check_parties(parties)
    if teacher is not None:
        if model is not None:
            raise ValueError("give teacher or model, not both")
        models.own_classifier(teacher)
        model = teacher
    data = datasets.load(dataset, label=label, schema=schema, intercept=intercept, **dataset_options)
    with tempfile.TemporaryDirectory(prefix="mpdp-") as scratch:
        directory = Path(run_dir) if run_dir is not None else Path(scratch) / "run"
        topology = processes.up(directory, parties, bits, data, seed, model=model,
                                parties_per_process=parties_per_process, budget=budget, foreground=True,
                                single_operator=single_operator)
        try:
            yield Deployment(directory, topology)
        finally:
            processes.down(directory)
