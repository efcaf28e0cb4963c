"""The default budget fits the README: its "Commands in short", run in their order at their defaults, are all
admitted, each charged by the code the parties charge it with; `mpdp budget` says what is left and what the
next session of each protocol at its defaults would cost, as text and as JSON all the way down."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from launcher.cli import build_parser, main
from launcher.deployment import processes
from launcher.protocol import DeploymentShape
from launcher.registry import PROTOCOLS
from mpdp.learning import datasets
from mpdp.privacy.composition import Guarantee
from mpdp.privacy.ledger import DEFAULT_BUDGET, Ledger, provision
from tests.test_docs import README, commands_of


def _commands_in_short() -> list[list[str]]:
    text = README.read_text()
    block = re.search(r"## Commands in short\n+```sh\n(.*?)```", text, re.S)
    assert block, "the README has a 'Commands in short' block"
    return commands_of(block.group(1))


def _parsed(argv: list[str]):
    return build_parser(argv[0]).parse_args(argv)


def test_the_readme_commands_in_their_order_at_their_defaults_fit_the_default_budget(tmp_path):
    commands = [_parsed(argv) for argv in _commands_in_short()]
    ups = {args.run_dir: args for args in commands if args.command == "up"}
    assert all(up.budget is None for up in ups.values())  # the parties' default budget, as a newcomer types it
    runs = [args for args in commands if args.command == "run"]
    assert {args.protocol for args in runs} == set(PROTOCOLS)  # every protocol, each charged below
    deployments = {}
    for run_dir, up in ups.items():  # one ledger per deployment: its first party's, charged as every party is
        _, client_data = processes.split_data(datasets.load(up.dataset), up.parties, seed=0)
        colluding = 1 if up.single_operator else up.parties_per_process
        data = tmp_path / f"{run_dir}_party_1.npz"
        data.write_bytes(b"records")
        provision(data, 1)
        ledger = Ledger(data, 1)
        assert ledger.budget == DEFAULT_BUDGET
        # the guarantee does not depend on the key
        deployments[run_dir] = (DeploymentShape(up.parties, colluding, bytes(32), client_data), ledger)
    totals = {}
    for number, args in enumerate(runs):
        shape, ledger = deployments[args.run_dir]
        charge = PROTOCOLS[args.protocol].charge(args, shape)
        assert isinstance(charge, Guarantee) and not charge.unproven
        # BudgetExceeded if the default does not fit
        totals[args.run_dir] = ledger.spend(f"readme-{number}", args.protocol, charge)
    for run_dir, (_, ledger) in deployments.items():
        assert [entry["protocol"] for entry in ledger.entries()] == [a.protocol for a in runs if a.run_dir == run_dir]
    first = commands[0].run_dir  # the README states what its first deployment's commands spend
    total = totals[first]
    assert f"spend ε ≈ {total.epsilon:.1f}, δ ≈ {total.delta:.0e}".replace("e-05", "e-5") in README.read_text()


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("budget") / "run"
    topology = processes.prepare(run_dir, 3, 1024, datasets.load("breast-cancer"), processes.loopback_addresses(3),
                                 seed=3)
    pathak = Guarantee(1.0, 1e-6, "pathak", {"kind": "pure", "epsilon": 1.0, "count": 1})
    for entry in topology.parties:
        Ledger(entry.data, entry.identity.id).spend("earlier", "pathak", pathak)
    return run_dir


def _output(argv: list[str]) -> tuple[int, str]:
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        code = main(argv)
    return code, captured.getvalue()


def test_budget_says_what_is_left_and_what_each_protocols_next_default_session_costs(prepared):
    code, text = _output(["budget", "--run-dir", str(prepared)])
    assert code == 0
    assert re.search(r"ε ≤ 19(\.\d+)?, δ = 1\.9e-05", text)  # what is left, at every party
    for name in PROTOCOLS:
        assert re.search(rf"^  {name} +ε = .*: admitted by every party; spent with it ε = ", text, re.M), name


def test_budget_as_json_is_json_all_the_way_down(prepared):
    code, text = _output(["budget", "--run-dir", str(prepared), "--format", "json"])
    answer = json.loads(text)
    assert code == 0 and answer["success"] and "output" not in answer
    report = answer["report"]
    assert [row["party"] for row in report["parties"]] == [1, 2, 3]
    assert all(row["left"]["delta"] == pytest.approx(DEFAULT_BUDGET.delta - 1e-6) for row in report["parties"])
    assert {answer["protocol"] for answer in report["next_sessions"]} == set(PROTOCOLS)
    for upcoming in report["next_sessions"]:
        assert Guarantee.from_json(upcoming["charge"]).epsilon > 0
        assert [party["admitted"] for party in upcoming["parties"]] == [True] * 3


def test_budget_learns_the_protocols_and_their_charges_from_the_registry_it_is_given():
    """`next_sessions` knows no protocol by name: a registry of one made-up protocol is all it reports; a party
    with no limit admits it without composing, one at its limit refuses it."""
    from launcher.commands import budget
    from launcher.protocol import LauncherProtocol, Option

    made_up = LauncherProtocol("made-up", "", lambda: [Option("epsilon", {"type": float, "default": 2.0})],
                               lambda *_: {}, lambda _: "",
                               charge=lambda args, shape: Guarantee(args.epsilon * shape.parties, 0.0, "made-up",
                                                                    {"kind": "pure", "epsilon": 1.0, "count": 1}))
    spent = Guarantee(19.0, 0.0, "earlier", {"kind": "pure", "epsilon": 19.0, "count": 1})
    rows = [{"party": 1, "budget": "inf", "entries": []},
            {"party": 2, "budget": [20.0, 2e-5], "entries": [{"guarantee": spent.to_json()}]}]
    [answer] = budget.next_sessions(rows, {"made-up": made_up}, DeploymentShape(3, 1, bytes(32), {}))
    assert answer["protocol"] == "made-up" and answer["charge"]["epsilon"] == 6.0
    assert [(party["party"], party["admitted"]) for party in answer["parties"]] == [(1, True), (2, False)]
    assert "admitted by parties 1, refused by 2" in budget.summary([], [answer])
