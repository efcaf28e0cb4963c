"""Each party's privacy ledger as one row: its sessions, the composed total, the budget in force and what is left
(what `mpdp budget` shows, read from the ledgers wherever the parties' data lies)."""

from __future__ import annotations

import json
from pathlib import Path

from mpdp.deployments.topology import Topology
from mpdp.privacy.composition import Composed, Guarantee, compose
from mpdp.privacy.ledger import DEFAULT_BUDGET, Budget, Ledger


def ledgers(topology_path: Path) -> list[dict]:
    """One row per party of the topology: its data file, sessions, the composed total, the budget and what is
    left of it."""
    topology = Topology.load(topology_path)
    rows = []
    for entry in topology.parties:
        if entry.data is None:
            continue
        ledger = Ledger(entry.data, entry.identity.id)
        entries = ledger.charges()  # checks the chain and the head: a tampered ledger is an error here too
        refunds = [e for e in ledger.entries() if "refund" in e]  # a refunded spend is not among `entries`
        total = composed_of([Guarantee.from_json(e["guarantee"]) for e in entries])
        budgets = [e["budget"] for e in entries if e.get("budget")]
        budget = recorded_budget(budgets[-1]) if budgets else DEFAULT_BUDGET
        rows.append({
            "party": entry.identity.id,
            "data_file": str(entry.data),
            "ledger": str(ledger.path),
            "sessions": len(entries),
            "by_protocol": {name: sum(1 for e in entries if e["protocol"] == name)
                            for name in sorted({e["protocol"] for e in entries})},
            "epsilon": total.epsilon,
            "delta": total.delta,
            "basic_epsilon": total.basic_epsilon,
            "composition": total.method,
            "budget": budget.to_json(),
            # the budget in force is the party's (`serve --budget`); its ledger records it with every spend
            "budget_source": "recorded with its last session" if budgets else "the default (no session recorded)",
            "left": left_of(budget, total),
            "entries": entries,
            "refunds": refunds,
        })
    return rows


def recorded_budget(recorded) -> Budget:
    return Budget.parse("inf") if recorded == "inf" else Budget(float(recorded[0]), float(recorded[1]))


_totals: dict[str, Composed] = {}


def composed_of(guarantees: list[Guarantee]) -> Composed:
    """compose(), once per distinct list (the parties of one deployment usually spent alike)."""
    key = json.dumps([g.to_json() for g in guarantees], sort_keys=True)
    if key not in _totals:
        _totals[key] = compose(guarantees)
    return _totals[key]


def left_of(budget: Budget, total: Composed) -> dict:
    """δ adds up, so δ left is exact; ε does not compose additively, so ε left is a guide (`next_sessions` composes
    each candidate as the party does)."""
    if budget.unlimited:
        return {"epsilon": None, "delta": None, "unlimited": True}
    epsilon = None if total.epsilon is None else max(0.0, budget.epsilon - total.epsilon)
    return {"epsilon": epsilon, "delta": max(0.0, budget.delta - total.delta), "unlimited": False}
