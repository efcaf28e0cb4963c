"""The statistics a table's unschema'd columns give the scaling are released under DP and charged
(mpdp/learning/private_statistics.py): one row moves step 1's histograms by at most 2 per column (the
sensitivity the noise is scaled to); a level only a few rows hold is never released; every party's ledger is
charged the stated (ε, δ) at `up`; a full schema reads nothing and charges nothing; a table too small for the
statistics says so and names the schema."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from launcher.deployment import processes
from mpdp.learning import datasets, private_statistics
from mpdp.privacy.ledger import Ledger, provision
from tests import synthetic_table


@pytest.fixture(scope="module")
def table_path(tmp_path_factory) -> Path:
    return synthetic_table.write(Path(tmp_path_factory.mktemp("stats")) / "table.csv", rows=3000)


def test_every_value_lands_in_the_bin_that_holds_it():
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.standard_normal(4000) * 10.0 ** rng.integers(-5, 12, 4000),
                             [0.0, 1.0, -1.0, 1e-3, 2.0, 5.0, 1e10, -1e10, 5e-4, -5e-4, 3e11]])
    for value, index in zip(values, private_statistics.bin_of(values)):
        b = private_statistics.BINS[index]
        assert (value == b.low) if b.point else (b.low <= value < b.high), (value, b)


def test_replacing_one_row_moves_each_columns_histogram_by_at_most_two():
    rng = np.random.default_rng(4)
    numeric = rng.lognormal(3, 2, 500)
    numeric[rng.choice(500, 30, replace=False)] = np.nan
    levels = list(rng.choice(["a", "b", "c"], 500).astype(object))
    for _ in range(200):
        row = int(rng.integers(500))
        other_numeric, other_levels = numeric.copy(), list(levels)
        other_numeric[row] = rng.choice([np.nan, 0.0, 1.0, float(rng.lognormal(3, 4))])
        other_levels[row] = rng.choice([None, "a", "d"])  # a new level is a new bin
        for before, after in ((numeric, other_numeric), (levels, other_levels)):
            (bins, counts), (bins_after, counts_after) = (private_statistics.counts_of(before),
                                                          private_statistics.counts_of(after))
            union = {**dict(zip(map(str, bins), counts[:-1])), "missing": counts[-1]}
            moved = {**dict(zip(map(str, bins_after), counts_after[:-1])), "missing": counts_after[-1]}
            assert sum(abs(union.get(k, 0) - moved.get(k, 0)) for k in set(union) | set(moved)) <= 2


def test_a_level_few_rows_hold_is_not_released_and_the_common_ones_are():
    rows = 4000
    rng = np.random.default_rng(5)
    cells = list(rng.choice(["web", "phone"], rows).astype(object))
    cells[:3] = ["rare", "rare", "rare"]
    for seed in range(20):
        found = private_statistics.release({}, {"channel": cells}, ["channel"], rows,
                                           noise=private_statistics.seeded(seed)).columns["channel"]
        assert found.levels == ("phone", "web")
        assert abs(sum(found.shares) - 1) < 0.02


def test_the_numeric_kinds_survive_the_noise(table_path):
    for seed in range(5):
        data = datasets.load(str(table_path), label="y", intercept=True,
                             statistics={"noise": private_statistics.seeded(seed)})
        rules = data.scaling["column_rules"]
        assert rules["balance"].startswith("log1p") and rules["age"].startswith("linear")
        low, high = (float(v) for v in rules["age"].split("[")[1].split("]")[0].split(", "))
        assert 10 <= low <= 25 and 85 <= high <= 100  # ages 18–89: not [10, 100] after the finer step
        assert "missing indicator" in rules["income"] and "missing indicator" not in rules["age"]


def test_up_charges_every_partys_ledger_the_stated_epsilon_and_a_schema_charges_nothing(table_path, tmp_path):
    data = datasets.load(str(table_path), label="y", intercept=True, statistics={"epsilon": 0.5})
    stated = data.scaling["statistics_privacy"]
    assert stated["epsilon"] == 0.5 and stated["delta"] == private_statistics.DELTA
    assert sum(step["epsilon"] for step in stated["steps"]) == pytest.approx(0.5)
    _, fields = processes.split_data(data, 3, seed=1)
    for number in (1, 2):
        part = tmp_path / f"party_{number}.npz"
        part.write_bytes(b"rows")
        provision(part, number)
        processes.charge_statistics(part, number, fields)
        entries = Ledger(part, number).entries()
        assert [e["protocol"] for e in entries] == [private_statistics.PROTOCOL]
        assert entries[0]["guarantee"]["epsilon"] == 0.5 and entries[0]["guarantee"]["delta"] == 1e-6
    heavy = {**stated, "epsilon": 25.0}  # over the default budget (ε = 20): refused in one line, nothing recorded
    with pytest.raises(ValueError, match="cannot take the table statistics.*--schema"):
        private_statistics.charge(tmp_path / "party_1.npz", 1, heavy, "up again")
    assert len(Ledger(tmp_path / "party_1.npz", 1).entries()) == 1
    full = tmp_path / "full.json"
    document = data.scaling["schema_document"]
    full.write_text(json.dumps(document))
    again = datasets.load(str(table_path), label="y", intercept=True, schema=str(full))
    assert "statistics_privacy" not in again.scaling and np.allclose(again.features, data.features)
    _, fields = processes.split_data(again, 3, seed=1)
    part = tmp_path / "party_3.npz"
    part.write_bytes(b"rows")
    provision(part, 3)
    processes.charge_statistics(part, 3, fields)
    assert Ledger(part, 3).entries() == []


def test_a_table_too_small_for_the_statistics_says_so_and_names_the_schema(tmp_path):
    path = tmp_path / "small.csv"
    path.write_text("a,b,y\n" + "".join(f"{k * 1.5},{k % 7},{k % 2}\n" for k in range(60)))
    data = datasets.load(str(path), label="y", intercept=True)
    assert any("too few rows" in note and "schema" in note for note in data.notes)
    assert data.scaling["column_rules"]["a"].startswith("sign·log1p")
    with pytest.raises(ValueError, match="positive"):
        private_statistics.options(0.0)
