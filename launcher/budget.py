"""`mpdp budget --run-dir DIR`: every party's privacy ledger, composed; what is left of its budget; and what the
next session of each protocol at its defaults would cost it, and whether it would be admitted."""

from __future__ import annotations

import json
from pathlib import Path

from mpdp.deployments.topology import Topology
from mpdp.privacy.composition import Composed, Guarantee, compose
from mpdp.privacy.ledger import DEFAULT_BUDGET, Budget, Ledger, describe


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
        total = _composed([Guarantee.from_json(e["guarantee"]) for e in entries])
        budgets = [e["budget"] for e in entries if e.get("budget")]
        budget = _budget(budgets[-1]) if budgets else DEFAULT_BUDGET
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
            "left": _left(budget, total),
            "entries": entries,
            "refunds": refunds,
        })
    return rows


def _budget(recorded) -> Budget:
    return Budget.parse("inf") if recorded == "inf" else Budget(float(recorded[0]), float(recorded[1]))


_totals: dict[str, Composed] = {}


def _composed(guarantees: list[Guarantee]) -> Composed:
    """compose(), once per distinct list (the parties of one deployment usually spent alike)."""
    key = json.dumps([g.to_json() for g in guarantees], sort_keys=True)
    if key not in _totals:
        _totals[key] = compose(guarantees)
    return _totals[key]


def _left(budget: Budget, total: Composed) -> dict:
    """δ adds up, so δ left is exact; ε does not compose additively, so ε left is a guide (`next_sessions` composes
    each candidate as the party does)."""
    if budget.unlimited:
        return {"epsilon": None, "delta": None, "unlimited": True}
    epsilon = None if total.epsilon is None else max(0.0, budget.epsilon - total.epsilon)
    return {"epsilon": epsilon, "delta": max(0.0, budget.delta - total.delta), "unlimited": False}


def next_sessions(rows: list[dict], protocols: dict, shape) -> list[dict]:
    """For every protocol of the registry that states its charge: what one session at its defaults (`mpdp run
    NAME` with no option) charges each party, and whether each party's budget would admit it."""
    from launcher.protocol import session_arguments

    answers = []
    for name, protocol in protocols.items():
        if protocol.charge is None:
            continue
        charge: Guarantee = protocol.charge(session_arguments(protocol), shape)
        parties = []
        for row in rows:
            budget = _budget(row["budget"])
            if budget.unlimited:  # nothing to compose: the party admits it (an unproven one only if allowed)
                parties.append({"party": row["party"], "admitted": not charge.unproven, "epsilon": None,
                                "delta": None})
                continue
            total = _composed([*(Guarantee.from_json(e["guarantee"]) for e in row["entries"]), charge])
            parties.append({"party": row["party"], "admitted": budget.allows(total) and not charge.unproven,
                            "epsilon": total.epsilon, "delta": total.delta})
        answers.append({"protocol": name, "charge": charge.to_json(), "unproven": charge.unproven,
                        "parties": parties})
    return answers


def summary(rows: list[dict], upcoming: list[dict] | None = None) -> str:
    lines = [f"{'party':>5}  {'sessions':>8}  {'spent (composed)':<28}  {'basic sum ε':>11}  {'budget':<20}  "
             f"{'left':<24}  protocols"]
    for row in rows:
        spent = describe_row(row)
        basic = "—" if row["basic_epsilon"] is None else f"{row['basic_epsilon']:.4g}"
        budget = str(_budget(row["budget"])) + ("" if row["sessions"] else " *")
        protocols = ", ".join(f"{name} ×{count}" for name, count in row["by_protocol"].items()) or "—"
        refunded = f"; {len(row['refunds'])} refunded" if row.get("refunds") else ""
        lines.append(f"{row['party']:>5}  {row['sessions']:>8}  {spent:<28}  {basic:>11}  {budget:<20}  "
                     f"{_describe_left(row['left']):<24}  {protocols}{refunded}")
    if any(row.get("refunds") for row in rows):
        lines.append("refunded: sessions that aborted before the party's data left it (a refund line in its ledger); "
                     "they are not counted above")
    if any(not row["sessions"] for row in rows):
        lines.append("* no session recorded yet: the default budget is shown; the party's own is its `serve --budget`")
    lines.append("unit: one record of the party's data set (replacement); composition by dp-accounting PLDs where "
                 "the mechanisms allow, basic otherwise; ε left is the budget's ε less the composed ε spent (a guide: ε "
                 "does not compose additively)")
    if upcoming is None:
        return "\n".join(lines)
    lines.append("the next session of each protocol at its defaults (`mpdp run NAME`), as each party charges it:")
    for answer in upcoming:
        charge = Guarantee.from_json(answer["charge"])
        admitted = [p["party"] for p in answer["parties"] if p["admitted"]]
        refused = [p["party"] for p in answer["parties"] if not p["admitted"]]
        totals = {(p["epsilon"], p["delta"]) for p in answer["parties"]}
        verdict = ("admitted by every party" if not refused else "refused by every party" if not admitted
                   else f"admitted by parties {_numbers(admitted)}, refused by {_numbers(refused)}")
        if answer["unproven"]:
            verdict += " (no proven ε: only parties started with --allow-unproven take it)"
        after = (f"; spent with it {describe(Composed(*totals.pop(), ''))}"
                 if len(totals) == 1 and None not in next(iter(totals)) else "")
        lines.append(f"  {answer['protocol']:<7} {describe(charge)} ({charge.mechanism}): {verdict}{after}")
    return "\n".join(lines)


def _describe_left(left: dict) -> str:
    if left["unlimited"]:
        return "unlimited"
    epsilon = "—" if left["epsilon"] is None else f"{left['epsilon']:.4g}"
    return f"ε ≤ {epsilon}, δ = {left['delta']:.3g}"


def _numbers(parties: list[int]) -> str:
    return ", ".join(str(number) for number in parties)


def describe_row(row: dict) -> str:
    return describe(Composed(row["epsilon"], row["delta"], row["composition"]))
