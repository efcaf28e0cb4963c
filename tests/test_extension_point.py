"""A protocol added through the registries alone (tests/secure_sum.py), and the layering every protocol keeps."""

import ast
import random
from pathlib import Path

import numpy as np

from aggregator.registry import protocols as aggregator_protocols
from mpdp_proto.v1 import common_pb2
from party.registry import protocols as party_protocols
from party.resources import PartyResources
from sessions.identity import AGGREGATOR, CLIENT, party
from tests import secure_sum
from wire.twin import InProcessNetwork

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


def test_the_launcher_builds_run_demo_and_experiment_from_its_registry(monkeypatch):
    """One launcher entry gives `run <name>`, prefixed demo options and an experiment; cli.py is not edited."""
    from launcher import cli, registry
    from launcher.protocol import Experiment, LauncherProtocol, Option, protocol_arguments

    ran = []
    entry = LauncherProtocol(
        name="secure-sum", help="sum of one integer per party",
        options=lambda: [Option("modulus", {"type": int, "default": 7})],
        run=lambda args, topology, data: {"modulus": args.modulus},
        summary=lambda report: f"sum mod {report['modulus']}",
        experiment=Experiment("sweep", lambda: [Option("out", {"type": Path})],
                              lambda args: ran.append(args.out) or 0),
    )
    monkeypatch.setitem(registry.PROTOCOLS, entry.name, entry)
    parser = cli.build_parser()
    run = parser.parse_args(["run", "secure-sum", "--modulus", "11", "--run-dir", "somewhere"])
    assert run.protocol == "secure-sum" and run.modulus == 11 and run.handler is cli._run
    demo = parser.parse_args(["demo", "--secure-sum-modulus", "13", "--dppp-queries", "3"])
    assert demo.__dict__["secure-sum__modulus"] == 13 and demo.dppp__queries == 3
    seen = protocol_arguments(demo, entry)
    assert seen.modulus == 13 and seen.parties == 5 and not hasattr(seen, "queries")
    experiment = parser.parse_args(["experiment", "secure-sum", "--out", "x"])
    assert experiment.handler(experiment) == 0 and ran == [Path("x")]


LAYERS = {  # a package may import only from packages of a lower layer (or its own)
    "cryptocore": 0, "privacy": 0, "learning": 0, "mpdp_proto": 0,
    "sessions": 1, "threshold_sum": 2, "vote_proofs": 2, "wire": 2,
    "dppp": 3, "pathak": 3, "hamm": 3, "du": 3, "keygen": 3, "deployments": 3,
    "party": 4, "curator": 4, "aggregator": 4,
    "launcher": 5,
    "mpdp": 6,  # the Python API over the launcher
}
# The transport carries envelopes for any protocol, anywhere: it knows no privacy accounting and no deployment.
OUTSIDE_TRANSPORT = {"privacy", "learning", "deployments"}
PROTOCOLS = {"dppp", "pathak", "hamm", "du", "threshold_sum", "vote_proofs", "keygen"}
ROLES = {"party", "curator", "aggregator"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_no_import_runs_back_up_a_layer():
    """wire/ imports no protocol package, no privacy accounting and no deployment; no role package imports
    another; nothing imports a higher layer; production code imports nothing from tests/."""
    offences = []
    for package, layer in LAYERS.items():
        if package == "mpdp_proto":
            continue
        for path in sorted((ROOT / package).rglob("*.py")):
            for imported in _imports(path):
                if imported == package or imported not in LAYERS and imported != "tests":
                    continue
                if imported == "tests" or LAYERS[imported] > layer \
                        or (package == "wire" and imported in PROTOCOLS | OUTSIDE_TRANSPORT) \
                        or (package in ROLES and imported in ROLES):
                    offences.append(f"{path.relative_to(ROOT)} imports {imported}")
                elif LAYERS[imported] == layer and package != imported and package not in ("threshold_sum", "vote_proofs"):
                    offences.append(f"{path.relative_to(ROOT)} imports {imported} (same layer)")
    assert not offences, offences


def _entries():
    """Every protocol's registry entry at every role that takes part in it."""
    from aggregator import dppp as aggregator_dppp
    from aggregator import du as aggregator_du
    from aggregator import hamm as aggregator_hamm
    from curator import hamm as curator_hamm
    from curator import pathak as curator_pathak
    from keygen.protocol import holder_protocol
    from party import dppp, du, hamm, pathak

    unused = None  # the entries use their resources when a session opens, never when they are made
    return [dppp.protocol(unused), du.protocol(unused), hamm.protocol(unused), pathak.protocol(unused),
            aggregator_dppp.protocol(unused, [], []), aggregator_du.protocol(unused, [], []),
            aggregator_hamm.protocol(unused, [], []), curator_hamm.protocol(unused), curator_pathak.protocol(unused),
            holder_protocol([1, 2], unused), secure_sum.party_protocol(unused),
            secure_sum.aggregator_protocol(unused, [], [])]


def test_every_kind_a_proto_declares_reaches_a_handler_or_the_client():
    """Across the roles, the kinds the sides take and those only the client receives are exactly the proto's."""
    from sessions.protocol import message_kinds

    to_client = {"result", "test_record", "published", "public_key", "total"}
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

    from sessions.protocol import RoleProtocol
    from sessions.side import RoleSide, handles

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
    from sessions.errors import Kind, ProtocolError

    side = secure_sum.SumParty("s", party(1), None)
    try:
        side.receive(AGGREGATOR, "total", 3)
    except ProtocolError as error:
        assert error.kind is Kind.INVALID_ARGUMENT and "takes no 'total'" in str(error)
    else:
        raise AssertionError("a kind without a handler was taken")
