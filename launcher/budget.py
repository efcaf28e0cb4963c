"""`mpdp budget --run-dir DIR`: every party's privacy ledger, composed."""

from __future__ import annotations

from pathlib import Path

from mpdp.deployments.topology import Topology
from mpdp.privacy.ledger import Ledger, describe


def ledgers(topology_path: Path) -> list[dict]:
    """One row per party of the topology: its data file, sessions, the composed total and the last budget."""
    topology = Topology.load(topology_path)
    rows = []
    for entry in topology.parties:
        if entry.data is None:
            continue
        ledger = Ledger(entry.data, entry.identity.id)
        entries = ledger.entries()  # checks the chain and the head: a tampered ledger is an error here too
        total = ledger.total()
        budgets = [e["budget"] for e in entries if e.get("budget")]
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
            "budget": budgets[-1] if budgets else None,
            "entries": entries,
        })
    return rows


def summary(rows: list[dict]) -> str:
    lines = [f"{'party':>5}  {'sessions':>8}  {'spent (composed)':<28}  {'basic sum ε':>11}  {'budget':<20}  protocols"]
    for row in rows:
        spent = describe_row(row)
        basic = "—" if row["basic_epsilon"] is None else f"{row['basic_epsilon']:.4g}"
        budget = ("none" if row["budget"] is None else "unlimited" if row["budget"] == "inf"
                  else f"ε = {row['budget'][0]:g}, δ = {row['budget'][1]:g}")
        protocols = ", ".join(f"{name} ×{count}" for name, count in row["by_protocol"].items()) or "—"
        lines.append(f"{row['party']:>5}  {row['sessions']:>8}  {spent:<28}  {basic:>11}  {budget:<20}  {protocols}")
    lines.append("unit: one record of the party's data set (replacement); composition by dp-accounting PLDs where "
                 "the mechanisms allow, basic otherwise")
    return "\n".join(lines)


def describe_row(row: dict) -> str:
    from mpdp.privacy.composition import Composed

    return describe(Composed(row["epsilon"], row["delta"], row["composition"]))
