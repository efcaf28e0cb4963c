"""A fix line's command fits where the run came from: a compose client container, a bundle's topology, a run
directory (launcher/common/rerun.py)."""

from __future__ import annotations

import yaml

from launcher.cli import build_parser
from launcher.common.rerun import command
from launcher.deployment.compose import render


def _run(*arguments: str):
    return build_parser("run").parse_args(["run", "dppp", *arguments])


def test_in_compose_the_fix_runs_a_new_demo_container_on_the_bundle_it_was_given(monkeypatch):
    environment = yaml.safe_load(render(5))["services"]["demo"]["environment"]
    for name, value in environment.items():
        monkeypatch.setenv(name, str(value))
    line = command("dppp", _run("--topology", "/bundle/topology.toml", "--client-data", "/bundle/client.npz"),
                   "--epsilon 5")
    assert line == ("`docker compose run --rm demo mpdp run dppp --topology /bundle/topology.toml --client-data "
                    "/bundle/client.npz --epsilon 5`")
    assert "--run-dir" not in line


def test_elsewhere_it_names_the_deployment_as_the_run_did(monkeypatch):
    monkeypatch.delenv("MPDP_DEPLOYMENT", raising=False)
    assert command("hamm", _run(), "--lambda 0.1") == "`mpdp run hamm --lambda 0.1`"
    assert command("hamm", _run("--run-dir", "/tmp/a b"), "--lambda 0.1") == "`mpdp run hamm --run-dir '/tmp/a b' --lambda 0.1`"
    assert command("du", _run("--topology", "t.toml"), "--epsilon 2") == "`mpdp run du --topology t.toml --epsilon 2`"
