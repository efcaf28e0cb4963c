"""Every `mpdp run` line of the README's "Commands in short", on the deployment its `mpdp up` line starts on the
bundled data: the check before spending lets it run, and through the in-process references the networked
sessions equal (launcher/commands/demo_reference.py: the same split, the clients' cut on the public rows) it beats the
majority class on every one of several splits with their own noise draws."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from launcher.cli import build_parser
from launcher.common import noise_check, spend_gate
from launcher.common.session_report import _student
from launcher.deployment.processes import split_data
from launcher.registry import PROTOCOLS
from mpdp.learning import datasets

README = Path(__file__).resolve().parent.parent / "README.md"
SPLITS = 8


def _block() -> list[list[str]]:
    text = re.search(r"## Commands in short\s*```sh\n(.*?)```", README.read_text(), flags=re.S).group(1)
    return [shlex.split(line.split("#")[0])[1:] for line in text.splitlines() if line.startswith("mpdp ")]


def _deployments() -> dict[str, argparse.Namespace]:
    ups = [build_parser("up").parse_args(words) for words in _block() if words[0] == "up"]
    return {str(up.run_dir): up for up in ups}


RUNS = [words for words in _block() if words[0] == "run"]


@pytest.fixture(scope="module")
def bundled() -> datasets.Dataset:
    return datasets.load(build_parser("up").parse_args(["up"]).dataset, intercept=True)


def test_the_block_runs_every_protocol_on_a_deployment_it_starts():
    ups = _deployments()
    assert {words[1] for words in RUNS} == set(PROTOCOLS)
    for words in RUNS:
        assert str(build_parser("run").parse_args(words).run_dir) in ups, words


# DPPP trains every teacher's ensemble per split (~10 s each on this machine): slow, on fewer splits
CASES = [pytest.param(words, marks=pytest.mark.slow, id=" ".join(words[:2])) if words[1] == "dppp" else
         pytest.param(words, id=" ".join(words[:2])) for words in RUNS]


@pytest.mark.parametrize("words", CASES)
def test_each_run_line_passes_the_check_and_beats_the_majority_class(tmp_path, bundled, words):
    args = build_parser("run").parse_args(words)
    up = _deployments()[str(args.run_dir)]
    protocol = PROTOCOLS[args.protocol]
    per_process = up.parties_per_process or 1
    colluding = 1 if up.single_operator else per_process  # one operator's simulation: c = 1, as `up` calibrates
    margins = []
    for seed in range(3 if args.protocol == "dppp" else SPLITS):
        split, client_data = split_data(bundled, up.parties, seed, up.split, up.aux_fraction)
        if seed == 0:  # the check before spending, on the evaluator's split with the parties' data files
            parties = []
            for number, (features, labels) in enumerate(split.teacher_parts, start=1):
                path = tmp_path / f"party_{number}.npz"
                datasets.save_part(path, features, labels, bundled.classes)
                parties.append(SimpleNamespace(data=path))
            topology = SimpleNamespace(parties=parties, colluding=colluding)
            check = noise_check.estimate(args.protocol, args, topology, client_data)
            verdict = spend_gate.check(protocol, args, topology, client_data, check, _student(protocol))
            assert verdict["verdict"] == "runs", verdict
        found = protocol.demo_reference(args, split, seed, colluding, up.model)
        margins.append(found["accuracy"] - found["majority"])
    assert min(margins) > 0, margins
    assert np.mean(margins) > 0.1, margins
