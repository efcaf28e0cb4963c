"""`mpdp budget --run-dir DIR`: every party's privacy ledger, composed; what is left of its budget; and what the
next session of each protocol at its defaults would cost it, and whether it would be admitted."""

from __future__ import annotations

from pathlib import Path

from launcher.common.ledger_rows import composed_of, ledgers, recorded_budget
from launcher.common.options import DEFAULT_RUN_DIR, print_summary, write_json
from mpdp.deployments.topology import Topology
from mpdp.privacy.composition import Composed, Guarantee
from mpdp.privacy.ledger import describe


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
            budget = recorded_budget(row["budget"])
            if budget.unlimited:  # nothing to compose: the party admits it (an unproven one only if allowed)
                parties.append({"party": row["party"], "admitted": not charge.unproven, "epsilon": None,
                                "delta": None})
                continue
            total = composed_of([*(Guarantee.from_json(e["guarantee"]) for e in row["entries"]), charge])
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
        budget = str(recorded_budget(row["budget"])) + ("" if row["sessions"] else " *")
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


def add_command(commands) -> None:
    """`mpdp budget`: its options."""
    spent = commands.add_parser("budget", help="every party's privacy ledger: sessions, the composed (ε, δ) spent, "
                                                "what is left, and what the next default session of each protocol "
                                                "would cost")
    spent.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR)
    spent.add_argument("--topology", type=Path, help="a topology elsewhere (default: the run directory's)")
    spent.add_argument("--client-data", type=Path, help="the client's data of that topology (default: the run "
                                                         "directory's), for what the next sessions would cost")
    spent.add_argument("--json", type=Path, help="write every ledger entry here")
    spent.set_defaults(handler=command)


def command(args) -> int:
    from launcher.deployment import processes

    run = processes.RunDirectory(args.run_dir)
    topology = args.topology or run.topology
    if not Path(topology).exists():
        raise SystemExit(f"mpdp: error: no topology at {topology}: pass --run-dir of a deployment or --topology")
    rows = None
    if not args.topology and (run.path / "ray.json").exists():
        from launcher.deployment import ray_hosts

        rows = ray_hosts.ledgers(run.path)  # a Ray deployment's parties spend in their actors' directories
    rows = ledgers(topology) if rows is None else rows
    client_data = args.client_data or run.client_data
    upcoming = None
    if Path(client_data).exists():
        from launcher.common import client
        from launcher.protocol import DeploymentShape
        from launcher.registry import PROTOCOLS

        shape = DeploymentShape.of(Topology.load(topology), client.load_client_data(client_data))
        upcoming = next_sessions(rows, PROTOCOLS, shape)
    report = {"parties": rows, "next_sessions": upcoming}
    text = summary(rows, upcoming)
    if upcoming is None:
        text += f"\n(no client data at {client_data}: pass --client-data for what the next sessions would cost)"
    print_summary(text, args.json)
    write_json(args.json, report)
    args.json_report = report  # `--format json`: the report itself, not its text
    return 0
