"""Each party enforces its own limits (docs/privacy-budget.md): its ledger's hash chain, its default budget, its
operator's permission for unproven mechanisms, one refusal message, and Du's round limit against a hostile
server."""

from __future__ import annotations

import json
import math
import queue
import re
from concurrent import futures

import grpc
import numpy as np
import pytest

from mpdp.privacy.composition import Guarantee, compose
from mpdp.privacy.ledger import (
    DEFAULT_BUDGET,
    UNLIMITED,
    Budget,
    Ledger,
    LedgerError,
    head_path,
    ledger_path,
    provision,
)
from mpdp.protocols.du import accounting
from mpdp.protocols.du.parameters import DuParameters
from mpdp.protocols.hamm.parameters import HammParameters
from mpdp.protocols.pathak.parameters import PathakParameters
from mpdp.sessions.errors import Kind, ProtocolError
from party.resources import REFUSED, PartyResources
from tests.waiting import PATIENCE_S, eventually


def _data(tmp_path, party=1):
    data = tmp_path / f"party_{party}.npz"
    data.write_bytes(b"records of party %d" % party)
    provision(data, party)
    return data


def _party(data, budget=UNLIMITED, allow_unproven=False, party=1) -> PartyResources:
    return PartyResources(party, None, None, None, np.zeros((1, 1)), np.zeros(1), ledger=Ledger(data, party, budget),
                          allow_unproven=allow_unproven)


def _du(method):
    return DuParameters(method=method, epsilon=0.5, delta=1e-5, rounds=4, tolerance=0.0, local_epochs=1,
                        learning_rate=1.0, regularization=0.01, parties=3, dimension=4, bound=50.0,
                        secure_aggregation=False, honest_fraction=2 / 3, key_id=b"k" * 32)


def _hamm(epsilon):
    return HammParameters("vote", epsilon, 1e-5, 0.01, 2, 10, 50, 4, False, False, 2 / 3, b"k" * 32)


UNPROVEN = {
    "du ofpa": lambda: accounting.guarantee(_du("ofpa")),
    "du ofaa": lambda: accounting.guarantee(_du("ofaa")),
    "du none": lambda: accounting.guarantee(_du("none")),
    "pathak laplace-paper": lambda: PathakParameters(1.0, 1e-5, 0.01, "laplace-paper", "tight", 5, 123).guarantee(),
    "hamm non-private": lambda: _hamm(math.inf).guarantee(),
}


def _refused(call) -> ProtocolError:
    with pytest.raises(ProtocolError) as refused:
        call()
    assert refused.value.kind is Kind.PERMISSION_DENIED and str(refused.value) == REFUSED
    return refused.value


@pytest.mark.parametrize("name", sorted(UNPROVEN))
def test_an_unproven_mechanism_is_refused_unless_the_operator_allowed_it(tmp_path, name, caplog):
    guarantee = UNPROVEN[name]()
    assert guarantee.unproven
    data = _data(tmp_path)
    before = ledger_path(data).read_bytes()
    refusing = _party(data)
    _refused(lambda: refusing.admit("s1", "x", guarantee))
    _refused(lambda: refusing.spend("s1", "x", guarantee))
    assert ledger_path(data).read_bytes() == before  # nothing recorded
    assert "no proven ε" in caplog.text and "did not allow" in caplog.text  # the reason: the party's log only
    allowing = _party(data, allow_unproven=True)
    allowing.admit("s2", "x", guarantee)
    allowing.spend("s2", "x", guarantee)
    assert [entry["session"] for entry in Ledger(data, 1).entries()] == ["s2"]


def test_the_proven_mechanisms_need_no_permission():
    for guarantee in (accounting.guarantee(_du("functional")), accounting.guarantee(_du("objective")),
                      PathakParameters(1.0, 1e-5, 0.01, "l2-laplace", "paper", 5, 123).guarantee(),
                      PathakParameters(1.0, 1e-5, 0.01, "gaussian", "tight", 5, 123).guarantee(), _hamm(1.0).guarantee()):
        assert not guarantee.unproven and guarantee.epsilon is not None


def test_the_default_budget_takes_k_sessions_and_refuses_the_next_without_numbers(tmp_path, caplog):
    """ε = 1 output perturbation (δ = 0): the default ε = 20 takes twenty sessions and refuses the next; the
    refusal carries the fixed text only, the party's log the spending."""
    assert DEFAULT_BUDGET == Budget(20.0, 2e-5)
    data = _data(tmp_path)
    own = PartyResources(1, None, None, None, np.zeros((1, 1)), np.zeros(1), ledger=Ledger(data, 1))
    guarantee = _hamm(1.0).guarantee()
    for number in range(20):
        own.admit(f"s{number}", "hamm", guarantee)
        own.spend(f"s{number}", "hamm", guarantee)
    before = ledger_path(data).read_bytes()
    refusal = _refused(lambda: own.admit("s20", "hamm", guarantee))
    _refused(lambda: own.spend("s20", "hamm", guarantee))
    assert not re.search(r"\d", str(refusal))
    assert ledger_path(data).read_bytes() == before
    assert "over the budget" in caplog.text and "spent ε = 20" in caplog.text


def test_the_default_delta_takes_two_sessions_of_delta_1e_5(tmp_path):
    data = _data(tmp_path)
    own = PartyResources(1, None, None, None, np.zeros((1, 1)), np.zeros(1), ledger=Ledger(data, 1))
    dppp_default = Guarantee(10.0, 1e-5, "dppp binomial shares")  # DPPP's default run: ε = 10, δ = 1e-5
    own.spend("first", "dppp", dppp_default)
    own.spend("second", "dppp", dppp_default)
    _refused(lambda: own.admit("third", "dppp", Guarantee(0.1, 1e-6, "x")))


def test_unlimited_is_asked_for_explicitly():
    assert Budget.parse("inf") is UNLIMITED and UNLIMITED.argument() == "inf"
    assert Budget.parse(Budget(4.0, 1e-5).argument()) == Budget(4.0, 1e-5)
    assert UNLIMITED.allows(compose([Guarantee(None, 0.0, "ofpa")]))
    assert not DEFAULT_BUDGET.allows(compose([Guarantee(None, 0.0, "ofpa")]))


# The ledger's hash chain: every change that lowers what was spent is an error at start and at every append.

def _spent(tmp_path, sessions=3):
    data = _data(tmp_path)
    ledger = Ledger(data, 1, UNLIMITED)
    for number in range(sessions):
        ledger.spend(f"s{number}", "pathak", Guarantee(1.0, 0.0, "pure", {"kind": "pure", "epsilon": 1.0, "count": 1}))
    return data, ledger


def _lines(data):
    return ledger_path(data).read_bytes().splitlines(keepends=True)


def _lowered(line: bytes) -> bytes:
    entry = json.loads(line)
    entry["guarantee"]["epsilon"] = 0.0
    return json.dumps(entry, sort_keys=True, ensure_ascii=False).encode() + b"\n"


TAMPERING = {
    "an entry edited": lambda data: ledger_path(data).write_bytes(b"".join(
        line if number != 1 else _lowered(line) for number, line in enumerate(_lines(data)))),
    "the last entry edited": lambda data: ledger_path(data).write_bytes(b"".join(_lines(data)[:-1])
                                                                        + _lowered(_lines(data)[-1])),
    "two entries swapped": lambda data: ledger_path(data).write_bytes(b"".join(
        [_lines(data)[0], _lines(data)[2], _lines(data)[1], *_lines(data)[3:]])),
    "an entry removed": lambda data: ledger_path(data).write_bytes(b"".join(_lines(data)[:2] + _lines(data)[3:])),
    "truncated to a prefix": lambda data: ledger_path(data).write_bytes(b"".join(_lines(data)[:-1])),
    "truncated to its header": lambda data: ledger_path(data).write_bytes(_lines(data)[0]),
    "a torn last line": lambda data: ledger_path(data).write_bytes(ledger_path(data).read_bytes()[:-5]),
    "deleted": lambda data: ledger_path(data).unlink(),
    "its head deleted": lambda data: head_path(data).unlink(),
    "emptied": lambda data: ledger_path(data).write_bytes(b""),
    "not JSON": lambda data: ledger_path(data).write_text("{not json\n"),
}


@pytest.mark.parametrize("tampering", sorted(TAMPERING))
def test_a_tampered_ledger_is_detected_at_start_and_at_every_append(tmp_path, tampering):
    data, _ = _spent(tmp_path)
    TAMPERING[tampering](data)
    after = ledger_path(data).read_bytes() if ledger_path(data).exists() else None
    with pytest.raises(LedgerError):
        Ledger(data, 1).check_writable()
    with pytest.raises(LedgerError):
        Ledger(data, 1, UNLIMITED).spend("more", "dppp", Guarantee(1.0, 0.0, "pure"))
    _refused(lambda: _party(data).admit("more", "dppp", Guarantee(1.0, 0.0, "pure")))
    assert (ledger_path(data).read_bytes() if ledger_path(data).exists() else None) == after  # nothing appended
    with pytest.raises(LedgerError):
        provision(data, 1)  # preparing the deployment again does not paper over it either


def test_another_partys_ledger_is_not_this_ones(tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    mine, _ = _spent(tmp_path / "one")
    theirs = _data(tmp_path / "two", party=2)
    ledger_path(mine).write_bytes(ledger_path(theirs).read_bytes())  # a fresh ledger copied over a spent one
    head_path(mine).write_bytes(head_path(theirs).read_bytes())
    with pytest.raises(LedgerError, match="belongs to party 2"):
        Ledger(mine, 1).check_writable()


def test_a_crash_between_the_line_and_its_head_rolls_the_line_back(tmp_path, caplog):
    """The head is an append's commit point: a whole line after the one it names was never acknowledged (spend
    had not returned, nothing was released on it), so readers ignore it and the next writer removes it."""
    data, ledger = _spent(tmp_path)
    head = head_path(data).read_bytes()
    before = ledger_path(data).read_bytes()
    ledger.spend("s3", "pathak", Guarantee(1.0, 0.0, "pure"))
    head_path(data).write_bytes(head)
    assert [entry["session"] for entry in Ledger(data, 1).entries()] == ["s0", "s1", "s2"]
    with caplog.at_level("WARNING", logger="mpdp.privacy.ledger"):
        Ledger(data, 1).check_writable()
    assert ledger_path(data).read_bytes() == before and "rolled back" in caplog.text


def test_provision_keeps_a_spent_ledger_and_sets_owner_only_modes(tmp_path):
    data, _ = _spent(tmp_path)
    provision(data, 1)
    assert len(Ledger(data, 1).entries()) == 3
    assert ledger_path(data).stat().st_mode & 0o777 == 0o600 and head_path(data).stat().st_mode & 0o777 == 0o600
    assert data.parent.stat().st_mode & 0o777 == 0o700
    ledger_path(data).chmod(0o644)
    Ledger(data, 1).check_writable()
    assert ledger_path(data).stat().st_mode & 0o777 == 0o600


# Over real processes.

class _HostileServer:
    """The aggregator's certificate and address, serving a server that takes every upload and keeps sending
    rounds: what an active aggregator can do."""

    def __init__(self, topology):
        from mpdp.proto.v1 import common_pb2, role_pb2_grpc
        from mpdp.sessions.identity import AGGREGATOR

        uploads: queue.Queue = queue.Queue()

        class Servicer(role_pb2_grpc.RoleServicer):
            def Step(self, request, context):
                uploads.put(request)
                return common_pb2.Empty()

        self.uploads = uploads
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        role_pb2_grpc.add_RoleServicer_to_server(Servicer(), self.server)
        address = topology.entry(AGGREGATOR).address
        def listening() -> bool:  # the killed aggregator's socket may take a moment to close
            try:
                return bool(self.server.add_secure_port(address, topology.tls_for(AGGREGATOR).server_credentials()))
            except RuntimeError:
                return False
        if not eventually(listening, interval=0.2):
            raise RuntimeError(f"cannot listen on {address}")
        self.server.start()

    def upload(self, round_number: int):
        envelope = self.uploads.get(timeout=PATIENCE_S)
        assert envelope.du.WhichOneof("body") == "upload" and envelope.du.upload.round == round_number
        return envelope.du.upload


@pytest.mark.network
def test_a_du_party_answers_r_rounds_and_refuses_every_later_one_from_a_hostile_server(tmp_path):
    """R = 3, a budget of ε = 4: the party answers rounds 0..2, refuses round 3 with the fixed refusal (and the
    run is over for it: round 4 too), and its ledger holds R·ε. A second run ends with the final model; any
    message after it is refused."""
    from launcher.common.client import opening_signature
    from launcher.protocols.du.client import session_parameters
    from mpdp.proto.v1 import du_pb2
    from mpdp.proto.v1.role_pb2_grpc import RoleStub
    from mpdp.sessions.identity import AGGREGATOR, party
    from tests.deployment import deployment, envelope

    with deployment(tmp_path, 2, budget=Budget(4.0, 1e-4)) as d:
        d.kill(AGGREGATOR)
        hostile = _HostileServer(d.topology)
        try:
            parameters = session_parameters(d.topology, d.client_data, "functional", 1.0, 3, local_epochs=1)

            def model(session_id, round_number, final=False):
                # the test plays the client too: the opening (round 0) carries its signature
                signature = opening_signature(d.topology, "du", session_id, parameters)
                body = du_pb2.DuModel(parameters=parameters.to_proto(), round=round_number, final=final,
                                      theta=[0.0] * parameters.weights, round_deadline_seconds=60.0,
                                      client_signature=signature)
                return d.call(party(1), RoleStub, "Step", envelope(session_id, party(1), AGGREGATOR,
                                                                   du=du_pb2.DuMessage(model=body)), AGGREGATOR)

            for round_number in range(3):
                model("limited", round_number)
                hostile.upload(round_number)
            for round_number in (3, 4):
                with pytest.raises(grpc.RpcError) as refused:
                    model("limited", round_number)
                assert refused.value.code() in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.FAILED_PRECONDITION)
                assert not re.search(r"\d", refused.value.details().replace("limited", ""))
            assert hostile.uploads.empty()
            entries = Ledger(d.topology.entry(party(1)).data, 1).entries()
            assert [entry["session"] for entry in entries] == ["limited"]
            assert entries[0]["guarantee"]["epsilon"] == pytest.approx(3.0, rel=1e-3)  # R·ε, composed exactly
            log = [d.run.log_file(party(1))]
            assert any("at or past the limit R = 3" in path.read_text() for path in log)

            # R = 1 leaves ε = 1 of the budget: a second run, ended by the final model after round 0.
            parameters = session_parameters(d.topology, d.client_data, "functional", 1.0, 1, local_epochs=1)
            model("finished", 0)
            hostile.upload(0)
            model("finished", 1, final=True)
            for late in (1, 2):
                with pytest.raises(grpc.RpcError):
                    model("finished", late)
            assert hostile.uploads.empty()
        finally:
            hostile.server.stop(0)


@pytest.mark.network
def test_a_party_enforces_its_policy_over_real_processes(tmp_path):
    """Default budget, no operator flag: laplace-paper is refused (the client learns only that), l2-laplace
    sessions run until the default budget is spent and the next one is refused; restarted with
    `--allow-unproven` the parties take laplace-paper while it fits. A deleted ledger stops the party from
    serving; `mpdp budget` reads the ledgers."""
    from launcher.cli import main
    from launcher.common.errors import StartupError
    from launcher.deployment import processes
    from mpdp.sessions.identity import party
    from tests.deployment import deployment

    with deployment(tmp_path, 3, budget=None) as d:  # the parties' default budget
        with pytest.raises(grpc.RpcError) as refused:
            d.run_pathak(session_id="unproven", mechanism="laplace-paper", epsilon=0.5)
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED and REFUSED in refused.value.details()
        assert all(Ledger(entry.data, entry.identity.id).entries() == [] for entry in d.topology.parties)

        one = d.pathak_parameters(epsilon=8.0).guarantee()
        fits = max(k for k in range(1, 10) if DEFAULT_BUDGET.allows(compose([one] * k)))
        for number in range(fits):
            d.run_pathak(session_id=f"fits-{number}", epsilon=8.0)
        with pytest.raises(grpc.RpcError) as refused:
            d.run_pathak(session_id="over", epsilon=8.0)
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert REFUSED in refused.value.details() and not re.search(r"ε|budget|spent", refused.value.details())
        for entry in d.topology.parties:
            assert len(Ledger(entry.data, entry.identity.id).entries()) == fits

        report = tmp_path / "budget.json"
        assert main(["budget", "--run-dir", str(d.run.path), "--json", str(report)]) == 0
        rows = json.loads(report.read_text())["parties"]
        assert [row["sessions"] for row in rows] == [fits] * 3 and rows[0]["budget"] == [20.0, 2e-5]

        ledger_path(d.topology.entry(party(3)).data).unlink()
        with pytest.raises(StartupError, match="party/3"):
            processes.restart(d.run.path, party(3), test_mode=True)
        assert "is missing" in d.run.log_file(party(3)).read_text()


@pytest.mark.network
def test_the_operator_flag_admits_unproven_mechanisms(tmp_path):
    from tests.deployment import deployment

    with deployment(tmp_path, 3, budget=None, allow_unproven=True) as d:
        report = d.run_pathak(session_id="allowed", mechanism="laplace-paper", epsilon=0.5)
        assert report["result"]["w"]
        charged = d.pathak_parameters(mechanism="laplace-paper", epsilon=0.5).guarantee()
        for entry in d.topology.parties:
            (spent,) = Ledger(entry.data, entry.identity.id).entries()
            assert spent["guarantee"]["proven"] is False
            assert spent["guarantee"]["epsilon"] == pytest.approx(charged.epsilon)
