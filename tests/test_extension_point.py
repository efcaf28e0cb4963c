"""A protocol added through the registries alone (tests/secure_sum.py), and the layering every protocol keeps."""

import ast
import fnmatch
import random
import re
import tomllib
from pathlib import Path

import numpy as np

from aggregator.registry import protocols as aggregator_protocols
from mpdp.proto.v1 import common_pb2
from mpdp.sessions.identity import AGGREGATOR, CLIENT, party
from mpdp.wire.twin import InProcessNetwork
from party.registry import protocols as party_protocols
from party.resources import PartyResources
from tests import secure_sum

ROOT = Path(__file__).resolve().parent.parent


def test_a_test_only_protocol_runs_through_the_registries_alone(threshold_key):
    public, shares = threshold_key
    k = len(shares) + 1  # one party without a key share
    rng = np.random.default_rng(4)
    own = {party(i): PartyResources(i, public, shares[i - 1] if i <= len(shares) else None, None,
                                    np.zeros((3, 2)), rng.integers(0, 2, size=20), test_mode=True)
           for i in range(1, k + 1)}
    registries = {identity: party_protocols(own.__getitem__, secure_sum.party_protocol(own.__getitem__))
                  for identity in own}
    registries[AGGREGATOR] = aggregator_protocols(public, list(range(1, k + 1)), list(range(1, len(shares) + 1)),
                                                  secure_sum.aggregator_protocol(public, list(range(1, k + 1)),
                                                                                 list(range(1, len(shares) + 1))))
    net = InProcessNetwork("sum", registries, random.Random(1))
    net.send(CLIENT, AGGREGATOR, secure_sum.NAME, "open", common_pb2.Empty())
    net.run()
    assert not net.refused, net.refused
    assert net.sides[AGGREGATOR].result() == ("total", sum(int(r.labels.sum()) for r in own.values()))
    holders = len(shares)
    assert net.messages == {("client", "aggregator", "Step/extension"): 1,
                            ("aggregator", "party", "Step/extension"): k + holders,
                            ("party", "aggregator", "Step/extension"): k + holders}


def test_the_launcher_builds_every_command_and_list_from_its_registry(monkeypatch):
    """One launcher entry gives `run <name>`, prefixed demo options, an experiment, `bench <name>`, a place in
    `bench scale`, `audit` and the fault matrix, and a test marker; cli.py is not edited."""
    from launcher import cli, registry
    from launcher.bench import attacks as hardening
    from launcher.bench import scale as bench_scale
    from launcher.commands import audit
    from launcher.commands import run as run_command
    from launcher.protocol import Bench, Experiment, Faults, LauncherProtocol, Option, Scale, protocol_arguments
    from tests import conftest

    async def one_sum(topology, client_data, *rest):
        return {"wall_s": 0.0, "traffic": []}

    ran = []
    entry = LauncherProtocol(
        name="secure-sum", help="sum of one integer per party",
        options=lambda: [Option("modulus", {"type": int, "default": 7})],
        run=lambda args, topology, data: {"modulus": args.modulus},
        summary=lambda report: f"sum mod {report['modulus']}",
        experiment=Experiment("sweep", lambda: [Option("out", {"type": Path})],
                              lambda args: ran.append(args.out) or 0),
        bench=Bench("sums per second", lambda: [Option("rounds", {"type": int, "default": 1})],
                    lambda args: ran.append(args.rounds) or 0),
        scale=Scale(sizes=(3, 6), parties_per_process=3, rows_per_party=10, session=one_sum),
        faults=Faults(received={"party": ["Step/extension/open"]}, sent={"aggregator": ["Step/extension/open"]},
                      session=one_sum),
        audit_noise="binomial",
    )
    monkeypatch.setitem(registry.PROTOCOLS, entry.name, entry)
    parser = cli.build_parser()
    run = parser.parse_args(["run", "secure-sum", "--modulus", "11", "--run-dir", "somewhere"])
    assert run.protocol == "secure-sum" and run.modulus == 11 and run.handler is run_command.command
    demo = parser.parse_args(["demo", "--secure-sum-modulus", "13", "--dppp-queries", "3"])
    assert demo.__dict__["secure-sum__modulus"] == 13 and demo.dppp__queries == 3
    seen = protocol_arguments(demo, entry)
    assert seen.modulus == 13 and seen.parties == 5 and not hasattr(seen, "queries")
    experiment = parser.parse_args(["experiment", "secure-sum", "--out", "x"])
    assert experiment.handler(experiment) == 0 and ran == [Path("x")]
    bench = parser.parse_args(["bench", "secure-sum", "--rounds", "4"])
    assert bench.handler(bench) == 0 and ran == [Path("x"), 4]
    scale = parser.parse_args(["bench", "scale", "--secure-sum-sizes", "3,9"])
    assert "secure-sum" in scale.protocols.split(",") and scale.__dict__["secure_sum_sizes"] == "3,9"
    assert bench_scale.scaled()["secure-sum"] is entry.scale
    assert parser.parse_args(["audit", "secure-sum"]).protocol == "secure-sum"
    assert audit.default_noise()["secure-sum"] == "binomial"
    scenarios = hardening.full_matrix(3)
    assert ("secure-sum", party(3), "kill-on:Step/extension/open") in scenarios
    assert ("secure-sum", AGGREGATOR, "drop:Step/extension/open") in scenarios
    assert "secure-sum" in conftest._protocols()



def test_a_fifth_protocol_gets_its_chart_noise_check_table_and_fault_rows_from_its_entry(monkeypatch):
    """The sequence chart's stages, the noise check and spread, `experiment all`'s sizes, docs/reproduction.md's
    tables and the fault matrix's kill and stop rows of a protocol come from its launcher entry alone."""
    from launcher import registry
    from launcher.bench import hardening
    from launcher.commands import experiment_all, experiment_table, trace
    from launcher.common import noise_check, noise_spread
    from launcher.common.results import REPRODUCED, Claim
    from launcher.protocol import Experiment, Faults, LauncherProtocol, ResultsTable
    from mpdp.sessions.identity import CURATOR

    async def one_sum(*rest):
        return {}

    noisy = {"release": "the sum", "noise": 2.0, "noise_name": "noise", "signal_bound": 1.0, "ratio": 2.0,
             "signal": "bound", "formula": "", "parties": 3, "warnings": ["the sum: too noisy"]}
    entry = LauncherProtocol(
        name="secure-sum", help="sum of one integer per party", options=lambda: [], run=lambda *rest: {},
        summary=lambda report: "",
        experiment=Experiment("sweep", lambda: [], lambda args: 0, full=("--rounds", "9"), quick=("--rounds", "1"),
                              table=ResultsTable(
                                  paper="Secure sum 1982", short="Sum", title="Secure sum", position=9,
                                  data="integers", lines=lambda report: [["Secure sum", "one sum", "integers", "",
                                                                         "", "7"]],
                                  measured=lambda report: f"sum {report['total']}",
                                  claims=lambda report: [Claim("the sum is exact", REPRODUCED, "", "", "7")])),
        faults=Faults(received={"party": ["Step/secure-sum/request"]}, sent={}, session=one_sum,
                      absent=("curator",)),
        message_type=secure_sum.SecureSumMessage,
        stages={"setup": ("open", "request"), "sums": ("contribution", "total"),
                "threshold decryption": ("decryption_request", "partial_decryptions")},
        noise_check=lambda args, topology, data: noisy,
        noise_spread=lambda report, topology, data: {"spread": report["total"]},
    )
    monkeypatch.setitem(registry.PROTOCOLS, entry.name, entry)
    assert trace.stage_of("secure-sum", "Step/secure-sum/contribution") == "sums"
    assert trace.stage_of("secure-sum", "Step/secure-sum/partial_decryptions") == "threshold decryption"
    assert noise_check.estimate("secure-sum", None, None, {})["warnings"] == ["the sum: too noisy"]
    assert noise_spread.estimate("secure-sum", {"total": 7, "result": {"test_metrics": {}}}, None, {}) == {"spread": 7}
    assert experiment_all.quick_sizes()["secure-sum"] == ["--rounds", "1"]
    assert experiment_all.full_sizes()["secure-sum"] == ["--rounds", "9"]
    assert experiment_table.protocols()[-1] == "secure-sum"
    reports = {**experiment_table.load(), "secure-sum": {"total": 7}}
    page = experiment_table.render(reports)
    assert "| Secure sum 1982 | integers | the sum is exact: **reproduced** | 7 |" in page
    assert "| Secure sum | one sum | integers | — | — | 7 |" in page
    assert "### Secure sum (`docs/results/secure-sum/`)\n\nsum 7" in page
    assert "| Sum | the sum is exact: **reproduced** | 7 |" in experiment_table.short_claims_table(reports)
    scenarios = hardening.default_scenarios(3)
    assert ("secure-sum", party(1), "SIGKILL") in scenarios and ("secure-sum", AGGREGATOR, "SIGSTOP") in scenarios
    assert not [row for row in scenarios if row[0] == "secure-sum" and row[1] == CURATOR]


def test_every_message_kind_of_every_protocol_has_one_chart_stage():
    """`mpdp trace` boxes every message of a session in a stage of its protocol: each kind its proto declares
    sits in exactly one stage of the registry entry (a kind added to a proto without a stage fails here)."""
    from launcher.registry import PROTOCOLS
    from mpdp.sessions.protocol import message_kinds

    for name, entry in PROTOCOLS.items():
        assert entry.message_type is not None, name
        staged = [kind for kinds in entry.stages.values() for kind in kinds]
        assert len(staged) == len(set(staged)), name
        assert set(staged) == set(message_kinds(entry.message_type)), name


LAYERS = {  # a package (a folder) may import only from packages of a lower layer (or its own)
    "mpdp/platform/": -1,  # the operating system's helpers (a child's lifetime), for every floor above
    "mpdp/cryptocore/": 0, "mpdp/privacy/": 0, "mpdp/proto/": 0,
    "mpdp/learning/": 0.5,  # models and tables, whose statistics read without a schema are under DP (mpdp/privacy)
    "mpdp/sessions/": 1, "mpdp/threshold_sum/": 2, "mpdp/vote_proofs/": 2, "mpdp/wire/": 2,
    "mpdp/observe/": 2.5,  # spans and metrics of the transport's calls (the optional [observe] extra)
    "mpdp/protocols/dppp/": 3, "mpdp/protocols/pathak/": 3, "mpdp/protocols/hamm/": 3, "mpdp/protocols/du/": 3, "mpdp/protocols/keygen/": 3, "mpdp/deployments/": 3,
    "party/": 4, "curator/": 4, "aggregator/": 4,
    "launcher/": 5,
    "mpdp/": 6,  # the Python API over the launcher (and, as the namespace, whatever deeper folder holds)
}
GENERATED = {"mpdp/proto/"}
SUBPROTOCOLS = {"mpdp/threshold_sum/", "mpdp/vote_proofs/"}  # building blocks the protocols share: one layer, importing each other
PROTOCOLS = {"mpdp/protocols/dppp/", "mpdp/protocols/pathak/", "mpdp/protocols/hamm/", "mpdp/protocols/du/", "mpdp/protocols/keygen/"} | SUBPROTOCOLS
ROLES = {"party/", "curator/", "aggregator/"}
TRANSPORT = "mpdp/wire/"
# The transport carries envelopes for any protocol, anywhere: it knows no privacy accounting and no deployment.
OUTSIDE_TRANSPORT = {"mpdp/privacy/", "mpdp/learning/", "mpdp/deployments/"}


def _package(path: str) -> str | None:
    """The deepest LAYERS folder holding `path` (a file's, or a module's with dots as slashes)."""
    held = [folder for folder in LAYERS if f"{path}/".startswith(folder)]
    return max(held, key=len) if held else None


def _imports(path: Path) -> set[str]:
    """The first-party packages `path` imports (absolute imports, as folders)."""
    tree = ast.parse(path.read_text())
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    found = {_package(module.replace(".", "/")) for module in modules}
    if any(module == "tests" or module.startswith("tests.") for module in modules):
        found.add("tests/")
    return {package for package in found if package is not None}


def test_no_import_runs_back_up_a_layer():
    """mpdp/wire/ imports no protocol package, no privacy accounting and no deployment; no role package imports
    another; nothing imports a higher layer; production code imports nothing from tests/."""
    offences = []
    files = {path for folder in LAYERS if folder not in GENERATED for path in (ROOT / folder).rglob("*.py")}
    for path in sorted(files):
        relative = str(path.relative_to(ROOT))
        package = _package(relative.removesuffix(".py"))
        if package is None or package in GENERATED:
            continue
        layer = LAYERS[package]
        for imported in _imports(path):
            if imported == package:
                continue
            if imported == "tests/" or LAYERS[imported] > layer or (package == TRANSPORT and imported in PROTOCOLS | OUTSIDE_TRANSPORT) \
                    or (package in ROLES and imported in ROLES):
                offences.append(f"{relative} imports {imported}")
            elif LAYERS[imported] == layer and not (package in SUBPROTOCOLS and imported in SUBPROTOCOLS):
                offences.append(f"{relative} imports {imported} (same layer)")
    assert not offences, offences


def _entries():
    """Every protocol's registry entry at every role that takes part in it."""
    from aggregator import dppp as aggregator_dppp
    from aggregator import du as aggregator_du
    from aggregator import hamm as aggregator_hamm
    from curator import hamm as curator_hamm
    from curator import pathak as curator_pathak
    from mpdp.protocols.keygen.protocol import holder_protocol
    from party import dppp, du, hamm, pathak

    unused = None  # the entries use their resources when a session opens, never when they are made
    return [dppp.protocol(unused), du.protocol(unused), hamm.protocol(unused), pathak.protocol(unused),
            aggregator_dppp.protocol(unused, [], []), aggregator_du.protocol(unused, [], []),
            aggregator_hamm.protocol(unused, [], []), curator_hamm.protocol(unused), curator_pathak.protocol(unused),
            holder_protocol([1, 2], unused, unused), secure_sum.party_protocol(unused),
            secure_sum.aggregator_protocol(unused, [], [])]


def test_every_kind_a_proto_declares_reaches_a_handler_or_the_client():
    """Across the roles, the kinds the sides take and those only the client receives are exactly the proto's."""
    from mpdp.sessions.protocol import message_kinds

    to_client = {"result", "test_record", "published", "public_key", "committed", "total", "pool_filled"}
    taken: dict[str, set[str]] = {}
    for entry in _entries():
        assert all(set(side.handlers) <= entry.takes for side in entry.sides)
        taken.setdefault(entry.name, set()).update(entry.takes)
    for entry in _entries():
        declared = set(message_kinds(entry.message_type))
        assert declared == taken[entry.name] | (declared & to_client), entry.name
        assert not taken[entry.name] & to_client, entry.name


def test_a_registry_entry_whose_handlers_do_not_match_the_proto_fails_at_start_up():
    """A handler for a kind the proto lacks, a kind the role is sent with no handler, an opening kind not taken:
    each refused with a clear error when the entry is made, as a role's registry is built at start-up."""
    import pytest

    from mpdp.sessions.protocol import RoleProtocol
    from mpdp.sessions.side import RoleSide, handles

    class Misnamed(RoleSide):
        @handles("contribution")
        def collect(self, sender, body):
            return []

        @handles("contributions")  # not a SecureSumMessage kind
        def collect_more(self, sender, body):
            return []

    def entry(side, takes, opening=frozenset({"contribution"})):
        return RoleProtocol("secure-sum", secure_sum.SecureSumMessage, opening, lambda *args: None, (side,),
                            frozenset(takes))

    with pytest.raises(ValueError, match="'contributions'"):
        entry(Misnamed, {"contribution", "contributions"})  # the proto has no such kind
    with pytest.raises(ValueError, match=r"Misnamed handles \['contributions'\]"):
        entry(Misnamed, {"contribution"})

    class Incomplete(RoleSide):
        @handles("contribution")
        def collect(self, sender, body):
            return []

    with pytest.raises(ValueError, match=r"needs a handler for \['partial_decryptions'\]"):
        entry(Incomplete, {"contribution", "partial_decryptions"})
    with pytest.raises(ValueError, match="opening kinds"):
        entry(Incomplete, {"contribution"}, opening=frozenset({"open"}))
    assert entry(Incomplete, {"contribution"}).sides == (Incomplete,)
    with pytest.raises(TypeError, match="twice"):
        type("Twice", (RoleSide,), {"a": handles("open")(lambda self, s, b: []),
                                    "b": handles("open")(lambda self, s, b: [])})


def test_a_side_refuses_a_kind_it_has_no_handler_for():
    from mpdp.sessions.errors import Kind, ProtocolError

    side = secure_sum.SumParty("s", party(1), None)
    try:
        side.receive(AGGREGATOR, "total", 3)
    except ProtocolError as error:
        assert error.kind is Kind.INVALID_ARGUMENT and "takes no 'total'" in str(error)
    else:
        raise AssertionError("a kind without a handler was taken")


# Shared launcher code that runs named protocols' sessions directly rather than through the registry: the wire
# sample of `audit` (DPPP and Pathak releases).
RUNS_NAMED_PROTOCOLS = {"audit/wire", "audit_wire"}


def _launcher_owner(name: str, protocols: set[str]) -> str | None:
    """The protocol a launcher module (path or dotted name) belongs to: its name carries the protocol's."""
    owners = protocols.intersection(re.split(r"[/._]", name))
    return owners.pop() if len(owners) == 1 else None


def test_the_launcher_reaches_a_protocol_through_its_registry():
    """A protocol's launcher code imports no other protocol's; the rest of the launcher imports a protocol's launcher
    code only through the registry (and where it runs named protocols on purpose)."""
    from launcher.registry import PROTOCOLS

    protocols = set(PROTOCOLS)
    offences = []
    for path in sorted((ROOT / "launcher").rglob("*.py")):
        relative = str(path.relative_to(ROOT / "launcher")).removesuffix(".py")
        owner = _launcher_owner(relative, protocols)
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [f"{node.module}.{alias.name}" for alias in node.names] \
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else []
            for name in names:
                if not name.startswith("launcher."):
                    continue
                imported = _launcher_owner(name.removeprefix("launcher."), protocols)
                if imported is None or imported == owner:
                    continue
                if owner is not None or relative not in RUNS_NAMED_PROTOCOLS | {"registry"}:
                    offences.append(f"launcher/{relative}.py imports {name}")
    assert not offences, offences


def test_every_package_is_installed_linted_and_type_checked():
    """pyproject's package lists cover every top-level package on disk (generated code is not type-checked)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests"}
    included = config["tool"]["setuptools"]["packages"]["find"]["include"]
    first_party = set(config["tool"]["ruff"]["lint"]["isort"]["known-first-party"])
    checked = {entry.split("/")[0] for entry in config["tool"]["mypy"]["files"]}
    generated = {folder.split("/")[0] for folder in GENERATED}
    assert {p for p in packages if not any(fnmatch.fnmatchcase(p, pattern) for pattern in included)} == set()
    assert packages - first_party == set()
    assert packages - generated - checked == set()


def test_installing_mpdp_adds_only_its_namespace_and_the_role_folders():
    """Shared code lives under `mpdp`: an install adds `mpdp` and the four folders the design names, no
    generic import name (`wire`, `privacy`, …) that could clash with another distribution's."""
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests"}
    assert packages == {"mpdp", "party", "curator", "aggregator", "launcher"}
