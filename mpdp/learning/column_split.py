"""`up --split column:NAME`: a cross-silo split, each party holding the training rows of one value (or one range
of values) of a column — a hospital's, a region's — as federated data is split in practice, never at random.

The groups are the column's distinct values, a missing cell its own group (`(missing)`). Then:
- as many groups as parties: one group each;
- more groups than parties: whole groups are dealt out, so no group is shared by two parties. A categorical
  column's groups go largest first to the party holding fewest rows so far; a numeric column's sorted values are
  cut into contiguous ranges of about equal size (party 1 the lowest), so each party holds a range of the column;
- fewer groups than parties: each group is split among several parties (a region with several hospitals), the
  parties dealt to groups in proportion to their sizes (every group at least one), a group's rows shared evenly
  among its parties in a seeded order.
A party left with fewer than `MIN_ROWS` rows is refused with the groups' sizes: a DPPP party's default ensemble
needs a row per teacher, and a silo that small is better merged by the user (another column or fewer parties).
The public and test rows stay a random sample of the whole table: the evaluator's split is not a silo.
"""

from __future__ import annotations

import math

import numpy as np

PREFIX = "column:"
MIN_ROWS = 10
MISSING = "(missing)"


def column_name(kind: str) -> str | None:
    """The column a `column:NAME` split names; None for any other split."""
    if not kind.startswith(PREFIX):
        return None
    name = kind[len(PREFIX):]
    if not name:
        raise ValueError(f"--split {kind!r}: column:NAME names a column of the table")
    return name


def _group_keys(cells) -> tuple[np.ndarray, bool]:
    """Each row's group as a string, and whether the column is numeric (its groups then have an order)."""
    values = np.asarray(cells, dtype=object)
    numeric = all(isinstance(v, (int, float, np.integer, np.floating)) for v in values)
    if numeric:
        numbers = values.astype(float)
        keys = np.array([MISSING if math.isnan(v) else f"{v:g}" for v in numbers], dtype=object)
        return keys, True
    return np.array([MISSING if v is None or v != v else str(v) for v in values], dtype=object), False


def split_by_column(train: np.ndarray, cells, parties: int, rng: np.random.Generator,
                    name: str = "the column") -> tuple[list[np.ndarray], list[list[str]]]:
    """The training rows `train` (indices into `cells`) as `parties` pieces by the column's groups, and the groups
    each piece holds."""
    keys, numeric = _group_keys(np.asarray(cells, dtype=object)[train])
    groups: dict[str, list[int]] = {}
    for row, key in zip(train.tolist(), keys.tolist()):
        groups.setdefault(key, []).append(row)
    if numeric:  # sorted by value (missing last): a party's share is a range of the column
        order = sorted(groups, key=lambda k: (k == MISSING, float(k) if k != MISSING else 0.0))
    else:
        order = sorted(groups, key=lambda k: (-len(groups[k]), k))
    pieces: list[list[int]] = [[] for _ in range(parties)]
    held: list[list[str]] = [[] for _ in range(parties)]
    if len(order) >= parties:
        if numeric:
            _deal_ranges(order, groups, pieces, held)
        else:
            for key in order:  # largest group to the party holding fewest rows
                party = min(range(parties), key=lambda p: (len(pieces[p]), p))
                pieces[party].extend(groups[key])
                held[party].append(key)
    else:
        for key, count in zip(order, _parties_per_group([len(groups[k]) for k in order], parties)):
            rows = rng.permutation(np.array(groups[key], dtype=int))
            first = sum(1 for p in pieces if p)
            for offset, chunk in enumerate(np.array_split(rows, count)):
                pieces[first + offset].extend(chunk.tolist())
                held[first + offset].append(key)
    small = [p for p in range(parties) if len(pieces[p]) < MIN_ROWS]
    if small:
        sizes = ", ".join(f"{k}: {len(groups[k])}" for k in order[:12]) + (" …" if len(order) > 12 else "")
        raise ValueError(f"--split column:{name}: party {small[0] + 1} would hold {len(pieces[small[0]])} rows "
                         f"(fewer than {MIN_ROWS}); the column's groups ({sizes}) — choose fewer parties or another "
                         "column")
    # shuffled within each party: an ensemble's consecutive parts (party/teachers.py) then mix the party's rows
    return [rng.permutation(np.array(piece, dtype=int)) for piece in pieces], held


def _deal_ranges(order: list[str], groups: dict[str, list[int]], pieces: list[list[int]],
                 held: list[list[str]]) -> None:
    """Consecutive groups to each party, cutting where the running total passes the next party's share, and
    leaving every party at least one group."""
    parties, total = len(pieces), sum(len(groups[k]) for k in order)
    party, running = 0, 0
    for index, key in enumerate(order):
        left_groups = len(order) - index
        must_move = pieces[party] and left_groups <= parties - party - 1  # every later party still gets a group
        should_move = pieces[party] and running >= total * (party + 1) / parties and party < parties - 1
        if must_move or should_move:
            party += 1
        pieces[party].extend(groups[key])
        held[party].append(key)
        running += len(groups[key])


def _parties_per_group(sizes: list[int], parties: int) -> list[int]:
    """Parties for each group (fewer groups than parties): one each, the rest by largest remainder of
    size-proportional shares."""
    counts = [1] * len(sizes)
    spare = parties - len(sizes)
    total = sum(sizes)
    wanted = [size / total * parties for size in sizes]
    for _ in range(spare):  # the group furthest below its proportional share gets the next party
        group = max(range(len(sizes)), key=lambda g: (wanted[g] - counts[g], -g))
        counts[group] += 1
    return counts
