"""A session that aborts before a party's data left it is refunded by a new ledger line; one that aborts after
keeps its charge, and so does one whose refund never became durable (docs/privacy-budget.md, "When a session
is charged")."""

from __future__ import annotations

import errno
import json
import os
import random

import numpy as np
import pytest

from aggregator.registry import protocols as aggregator_protocols
from mpdp.privacy.composition import Guarantee
from mpdp.privacy.ledger import UNLIMITED, Disk, Ledger, LedgerError, head_path, ledger_path, provision
from mpdp.proto.v1 import dppp_pb2
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.sessions.errors import ProtocolError
from mpdp.sessions.identity import AGGREGATOR, CLIENT, party
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.wire.twin import InProcessNetwork
from party.charge import Charge, Stage
from party.registry import protocols as party_protocols
from party.resources import PartyResources
from tests.test_dppp_sessions import SignClassifier

SPEND = Guarantee(1.0, 1e-7, "pure", {"kind": "pure", "epsilon": 1.0, "count": 1})
TEACHERS = 5


def _data(directory, number: int = 1):
    data = directory / f"party_{number}.npz"
    data.write_bytes(f"records of party {number}".encode())
    provision(data, number)
    return data


def _rechain(data, records: list[dict]) -> None:
    """The ledger rewritten with a consistent chain and head: only the ledger's own rules can refuse it."""
    path = ledger_path(data)
    lines = path.read_bytes().splitlines(keepends=True)[:1]
    for record in records:
        record["prev"] = _digest(lines[-1])
        lines.append(json.dumps(record, sort_keys=True).encode() + b"\n")
    path.write_bytes(b"".join(lines))
    head_path(data).write_bytes(json.dumps({"lines": len(lines), "sha256": _digest(lines[-1])}).encode() + b"\n")


def _digest(line: bytes) -> str:
    import hashlib
    return hashlib.sha256(line).hexdigest()


def test_a_refund_is_a_checked_line_that_takes_its_spend_out_of_the_total(tmp_path):
    data = _data(tmp_path)
    ledger = Ledger(data, 1)
    ledger.spend("a", "dppp", SPEND)
    ledger.spend("b", "dppp", SPEND)
    ledger.refund("a", "dppp", "aborted before the votes left")
    again = Ledger(data, 1)  # read afresh: the chain, the head and the refund all verify
    assert [e["session"] for e in again.charges()] == ["b"]
    assert again.total().epsilon == pytest.approx(1.0)
    assert [("refund" in e, e["session"]) for e in again.entries()] == [(False, "a"), (False, "b"), (True, "a")]
    with pytest.raises(LedgerError, match="no dppp spend of session a"):
        again.refund("a", "dppp", "twice")  # one refund per spend
    with pytest.raises(LedgerError, match="no hamm spend of session b"):
        again.refund("b", "hamm", "another protocol's")
    records = [json.loads(line) for line in ledger_path(data).read_bytes().splitlines()[1:]]
    records[2]["refund"] = _digest(b"a spend that is not in this ledger\n")
    _rechain(data, records)
    with pytest.raises(LedgerError, match="refunds no earlier spend"):
        Ledger(data, 1).entries()
    records[2]["refund"] = records[2]["prev"]  # the line before it: session b's spend, not a's
    _rechain(data, records)
    with pytest.raises(LedgerError, match="refunds a spend of another session"):
        Ledger(data, 1).entries()


class _NoCommit(Disk):
    """A disk that refuses the rename that commits an append (ENOSPC): the refund is never acknowledged."""

    @staticmethod
    def replace(source, target):  # type: ignore[override]
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_refund_that_is_not_durable_leaves_the_charge_and_release_then_refuses(tmp_path):
    data = _data(tmp_path)
    ledger = Ledger(data, 1, UNLIMITED)
    ledger.spend("s", "du", SPEND)
    ledger.disk = _NoCommit()
    charge = Charge(1, "s", "du", ledger)
    assert not charge.refund_unless_released("the server fell silent")
    assert charge.stage is Stage.ENDED
    with pytest.raises(ProtocolError, match="refunded"):
        charge.release()  # the session is over here either way: nothing leaves
    assert [e["session"] for e in Ledger(data, 1).charges()] == ["s"]


def test_a_crash_during_the_refund_keeps_the_charge_after_restart(tmp_path):
    """kill -9 between the refund's line and its head: at restart the torn refund is rolled back and the charge
    stays. The party does not refund on its own then: it has no record of whether its message had left."""
    data = _data(tmp_path)
    ledger = Ledger(data, 1, UNLIMITED)
    ledger.spend("s", "pathak", SPEND)
    path = ledger_path(data)
    spend_line = path.read_bytes().splitlines(keepends=True)[-1]
    refund = json.dumps({"prev": _digest(spend_line), "refund": _digest(spend_line), "session": "s",
                         "protocol": "pathak", "time": "t", "reason": "r"}, sort_keys=True).encode() + b"\n"
    with path.open("ab") as handle:
        handle.write(refund[:len(refund) // 2])  # as far as the crash let it get; the head was not replaced
    restarted = Ledger(data, 1, UNLIMITED)
    restarted.check_writable()  # what `serve party` does at start
    assert [e["session"] for e in restarted.charges()] == ["s"]
    assert not any("refund" in e for e in restarted.entries())


def test_release_and_refund_exclude_each_other(tmp_path):
    data = _data(tmp_path)
    ledger = Ledger(data, 1, UNLIMITED)
    ledger.spend("s", "hamm", SPEND)
    released = Charge(1, "s", "hamm", ledger)
    released.release()
    assert not released.refund_unless_released("aborted after the votes left")
    assert [e["session"] for e in ledger.charges()] == ["s"]
    refunded = Charge(1, "s", "hamm", ledger)
    assert refunded.refund_unless_released("aborted while voting")
    with pytest.raises(ProtocolError):
        refunded.release()
    assert ledger.charges() == [] and ledger.total().epsilon == 0


class _AbortingTeacher(SignClassifier):
    """A teacher whose prediction is under way when the session's abort reaches its side (as the client's or
    another role's abort lands on the host while the worker thread computes the votes)."""

    def __init__(self, offset, network_of):
        super().__init__(offset)
        self.network_of = network_of

    def predict(self, features):
        self.network_of()[0].sides[party(1)].abort("the client aborted the session")
        return super().predict(features)


def _dppp_twin(tmp_path, threshold_key, first_model=None, seed=3):
    public, shares = threshold_key
    # the fault-injection suite's round (tests/test_twin_faults.py): one calibration, cached, for both
    parameters = DpppParameters.with_minimal_noise(8.0, 1e-5, 4, 3, TEACHERS, 2 / 3, True, public.key_id, "binomial")
    own = {party(i): PartyResources(i, public, shares[i - 1], first_model if i == 1 and first_model else
                                    SignClassifier(i), np.zeros((2, 4)), np.zeros(2), test_mode=True,
                                    ledger=Ledger(_data(tmp_path, i), i, UNLIMITED))
           for i in range(1, TEACHERS + 1)}
    registries = {identity: party_protocols(own.__getitem__) for identity in own}
    registries[AGGREGATOR] = aggregator_protocols(public, list(range(1, TEACHERS + 1)), list(range(1, 6)))
    net = InProcessNetwork("dppp-refund", registries, random.Random(seed))
    net.send(CLIENT, AGGREGATOR, "dppp", "open", dppp_pb2.DpppRoundRequest(
        parameters=parameters.to_proto(), features=matrix_to_proto(np.random.default_rng(1).normal(size=(4, 4))),
        deadline_seconds=30))
    return net, own


def test_in_the_twin_an_abort_before_the_votes_leave_is_refunded(tmp_path, threshold_key):
    holder: list[InProcessNetwork] = []
    net, own = _dppp_twin(tmp_path, threshold_key, _AbortingTeacher(1, lambda: holder))
    holder.append(net)
    net.run()
    net.expire()
    assert net.sides[party(1)].state.name == "ABORTED"
    first = own[party(1)].ledger
    assert [("refund" in e) for e in first.entries()] == [False, True] and first.charges() == []
    assert "before party 1's data left" in first.entries()[1]["reason"]
    # Every other teacher that opened had cast its votes in the same step: its charge stays.
    for number in range(2, TEACHERS + 1):
        entries = own[party(number)].ledger.entries()
        assert not any("refund" in e for e in entries)
        assert len(entries) == (party(number) in net.sides)


def test_in_the_twin_an_abort_after_the_votes_left_keeps_every_charge(tmp_path, threshold_key):
    net, own = _dppp_twin(tmp_path, threshold_key)
    teachers = [party(i) for i in range(1, TEACHERS + 1)]
    net.run(stop_when=lambda n: all(t in n.sides and n.sides[t].state.name != "VOTING" for t in teachers))
    for teacher in teachers:  # the aggregator's abort, as it reaches every teacher
        net.sides[teacher].abort(f"{AGGREGATOR}: the client aborted the session", withdraw_result=True)
    for teacher in teachers:
        assert net.sides[teacher].state.name == "ABORTED"
        ledger = own[teacher].ledger
        assert len(ledger.charges()) == 1 and not any("refund" in e for e in ledger.entries())


def test_mpdp_budget_leaves_a_refunded_session_out_and_says_so(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from launcher.commands import budget

    data = _data(tmp_path)
    ledger = Ledger(data, 1)
    ledger.spend("kept", "dppp", SPEND)
    ledger.spend("aborted", "du", SPEND)
    ledger.refund("aborted", "du", "aborted before party 1's data left: the server fell silent")
    topology = SimpleNamespace(parties=[SimpleNamespace(data=data, identity=party(1))])
    monkeypatch.setattr(budget.Topology, "load", staticmethod(lambda path: topology))
    [row] = budget.ledgers(tmp_path / "topology.toml")
    assert row["sessions"] == 1 and row["by_protocol"] == {"dppp": 1} and row["epsilon"] == pytest.approx(1.0)
    assert [r["session"] for r in row["refunds"]] == ["aborted"]
    text = budget.summary([row])
    assert "dppp ×1; 1 refunded" in text and "refunded: sessions that aborted before" in text


@pytest.mark.parametrize("uploaded", [False, True], ids=["before its first upload", "after it"])
def test_a_du_party_that_aborts_is_refunded_only_before_its_first_upload(tmp_path, threshold_key, uploaded):
    from mpdp.proto.v1 import du_pb2
    from party.du import protocol
    from tests.test_du_sessions import _parameters, parts

    public, shares = threshold_key
    x, y = parts.__wrapped__()[2]
    own = PartyResources(1, public, shares[0], None, x, y, test_mode=True, ledger=Ledger(_data(tmp_path), 1, UNLIMITED))
    opening = du_pb2.DuModel(parameters=_parameters(public).to_proto(), round=0, theta=[0.0] * 31,
                             round_deadline_seconds=5)
    side = protocol(lambda me: own).open("s", party(1), AGGREGATOR, "model", opening)
    assert len(own.ledger.charges()) == 1
    if uploaded:
        assert [o.kind for o in side.receive(AGGREGATOR, "model", opening)] == ["upload"]
    side.abort("the server fell silent")
    assert len(own.ledger.charges()) == (1 if uploaded else 0)
    assert [("refund" in e) for e in own.ledger.entries()] == ([False] if uploaded else [False, True])
