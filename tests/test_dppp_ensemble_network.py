"""DPPP's ensemble ballot over real processes (1024-bit, loopback; docs/data-and-metrics.md, "DPPP: each party's
ensemble of teachers"): a default `run dppp` on 5 owners of the 20 000-row skewed table casts ballots of T votes
per query and gives a student that ranks the rows and beats the majority class; proven ensemble ballots carry
T proofs per query (tests/test_malicious_votes.py: one with more than T votes in a query is excluded by name)."""

import json

import numpy as np
import pytest

from launcher.cli import main
from launcher.deployment import processes
from launcher.protocols.dppp import commands as dppp_commands
from mpdp.learning import datasets
from mpdp.privacy.ledger import UNLIMITED
from mpdp.protocols.dppp.reference import noisy_histograms
from mpdp.vote_proofs.assurance import Assurance
from tests import synthetic_table
from tests.deployment import Deployment
from tests.test_dppp_network import closed_form_counts, observed_counts

pytestmark = [pytest.mark.slow, pytest.mark.network]

OWNERS = 5  # `mpdp up`'s default
SEED = 2  # the split on which one model per teacher left the student at chance (AUC 0.526)


@pytest.fixture(scope="module")
def skewed(tmp_path_factory):
    root = tmp_path_factory.mktemp("ensemble")
    table = synthetic_table.write(root / "table.csv", rows=20_000)
    schema = synthetic_table.write_schema(root / "schema.json")
    run_dir = root / "run"
    topology = processes.up(run_dir, OWNERS, 1024, datasets.load(str(table), label="y", schema=str(schema),
                                                                 intercept=True),
                            seed=SEED, test_mode=True, budget=UNLIMITED, foreground=True)
    try:
        yield Deployment(run_dir, topology)
    finally:
        processes.down(run_dir)


def _records(deployment, report):
    records = deployment.test_records(report["session_id"])
    queries, classes = report["parameters"]["queries"], report["parameters"]["classes"]
    contributors = report["result"]["contributors"]
    votes = [np.array(records[i].votes).reshape(queries, classes) for i in contributors]
    noise = [np.array(records[i].noise).reshape(queries, classes) for i in contributors]
    return votes, noise


def test_a_default_run_casts_ensemble_ballots_and_learns_the_skewed_table(skewed, tmp_path):
    path = tmp_path / "dppp.json"
    assert main(["run", "dppp", "--run-dir", str(skewed.run.path), "--report", str(path)]) == 0
    report = json.loads(path.read_text())
    size = dppp_commands.ENSEMBLE_DEFAULT
    assert report["parameters"]["ensemble"] == size > 1 and report["parameters"]["teachers"] == OWNERS
    assert report["parameters"]["queries"] == dppp_commands.QUERIES_DEFAULT and report["parameters"]["colluding"] == 1
    votes, noise = _records(skewed, report)
    assert report["result"]["contributors"] == list(range(1, OWNERS + 1))
    assert all(np.all(v.sum(axis=1) == size) and v.min() >= 0 and v.max() <= size for v in votes)
    assert any(np.any((v > 0) & (v < size)) for v in votes)  # some models disagree: counts, not one vote
    expected = noisy_histograms(votes, noise, report["privacy"]["tosses_per_teacher"])
    assert np.array_equal(np.array(report["result"]["histograms"]), expected)
    # one ballot per teacher as with one model: the closed-form counts at K = 5 (t = 4 of 5 holders)
    assert observed_counts(report) == closed_form_counts(OWNERS, OWNERS)
    metrics = report["result"]["test_metrics"]
    assert report["baselines"]["majority_class_rate"] > 0.85
    assert metrics["auc"] > 0.6 and metrics["balanced_accuracy"] > 0.55, metrics
    assert not metrics["one_class"]
    assert not report["noise_check"]["warnings"]


def test_proven_ensemble_ballots_carry_t_proofs_per_query_and_equal_the_reference(skewed):
    queries, size = 6, 3
    report = skewed.run_dppp(queries=queries, ensemble=size, assurance=Assurance.PROVEN_VOTES)
    assert report["result"]["rejected_votes"] == {} and report["result"]["contributors"] == list(range(1, 6))
    votes, noise = _records(skewed, report)
    assert all(np.all(v.sum(axis=1) == size) for v in votes)
    assert np.array_equal(np.array(report["result"]["histograms"]),
                          noisy_histograms(votes, noise, report["privacy"]["tosses_per_teacher"]))
    row = next(r for r in report["traffic"] if r["rpc"] == "Step/dppp/votes")
    # Per teacher: Q·T vote ciphertexts (256 bytes at 1024 bits), each with C = 2 commitments of 256 bytes.
    assert row["messages"] == OWNERS and row["request_bytes"] > OWNERS * queries * size * 3 * 256
    one_model = skewed.run_dppp(queries=queries, ensemble=1, assurance=Assurance.PROVEN_VOTES)
    one_row = next(r for r in one_model["traffic"] if r["rpc"] == "Step/dppp/votes")
    assert one_row["request_bytes"] < row["request_bytes"] / 2

