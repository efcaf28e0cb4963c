"""`up --split column:NAME`: a cross-silo split, each party the training rows of one value or range of a column.
More values than parties: whole values dealt out, none shared (a numeric column in contiguous ranges); fewer:
a value split among several parties, each party still one value; every training row in exactly one part."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from launcher.cli import build_parser
from launcher.deployment.processes import split_data
from mpdp.learning import column_split, datasets
from tests import synthetic_table


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> datasets.Dataset:
    path = synthetic_table.write(Path(tmp_path_factory.mktemp("silo")) / "silo.csv", rows=1500)
    return datasets.load(str(path), label="y", intercept=True)


def _pieces(table, name, parties, seed=0):
    train = np.random.default_rng(seed).permutation(len(table.labels))[:1000]
    pieces, groups = column_split.split_by_column(train, table.raw_columns[name], parties,
                                                  np.random.default_rng(seed), name)
    return train, pieces, groups


def _keys(table, name, rows):
    keys, _ = column_split._group_keys(table.raw_columns[name][rows])
    return set(keys.tolist())


def test_more_values_than_parties_deals_whole_values_and_covers_every_row(table):
    train, pieces, groups = _pieces(table, "region", 5)
    assert sorted(np.concatenate(pieces).tolist()) == sorted(train.tolist())
    held = [_keys(table, "region", piece) for piece in pieces]
    assert all(held[a].isdisjoint(held[b]) for a in range(5) for b in range(a + 1, 5))  # no region in two parties
    assert [set(g) for g in groups] == held and len(set().union(*held)) == 40
    sizes = [len(piece) for piece in pieces]
    assert max(sizes) < 1.5 * min(sizes)  # largest region to the party holding fewest rows


def test_a_numeric_column_is_dealt_in_contiguous_ranges(table):
    _, pieces, _ = _pieces(table, "age", 4)
    ages = [table.raw_columns["age"][piece] for piece in pieces]
    assert all(ages[p].max() < ages[p + 1].min() for p in range(3))


def test_fewer_values_than_parties_splits_a_value_among_parties_and_each_party_holds_one(table):
    train, pieces, groups = _pieces(table, "channel", 6)  # web, phone, branch and missing cells: 4 groups
    assert all(len(_keys(table, "channel", piece)) == 1 for piece in pieces)
    assert sorted(np.concatenate(pieces).tolist()) == sorted(train.tolist())
    flat = [g[0] for g in groups]
    # shares about 0.47, 0.29, 0.19, 0.05 of 6 parties: the two spare parties to the largest value
    assert flat.count("web") == 3 and set(flat) == {"web", "phone", "branch", column_split.MISSING}
    again = _pieces(table, "channel", 6)[1]
    assert all(np.array_equal(a, b) for a, b in zip(pieces, again))  # seeded


def test_up_records_each_partys_values_and_refuses_what_it_cannot_split(table):
    assert build_parser("up").parse_args(["up", "--split", "column:region"]).split == "column:region"
    split, fields = split_data(table, 5, 3, "column:channel")
    assert len(split.teacher_parts) == 5 and '"web"' in fields["party_groups"]
    with pytest.raises(ValueError, match="no column 'hospital'.*region"):
        split_data(table, 5, 3, "column:hospital")
    with pytest.raises(ValueError, match="fewer than 10.*another column"):
        split_data(table, 150, 3, "column:region")
