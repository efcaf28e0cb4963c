"""`mpdp verify` on a Du report (launcher/protocols/du/transcript.py), reached through the registry as the command
reaches it: a secure-aggregation run's report, built from a twin's result and its transcript, verifies; each
field a lying server or an edited file could change is rejected — a dropped, duplicated or altered upload, two
holders' answers swapped, θ, a round's participants or step, a rejected holder, ε, the privacy line."""

from __future__ import annotations

import copy
import json

import pytest

from launcher.protocols.du.transcript import transcript
from launcher.protocols.stored_transcript import b64, unb64
from launcher.registry import PROTOCOLS
from mpdp.proto.v1 import du_pb2
from mpdp.protocols.du import accounting
from tests.test_client_checks import HOLDERS, du_released  # noqa: F401  (the twin's one-round run)
from tests.test_verify_hamm_pathak import _edited

SESSION = "du"  # the twin's session id


@pytest.fixture(scope="module")
def report(du_released):  # noqa: F811
    parameters, public, result = du_released
    history = [{"round": r.round, "participants": list(r.participants), "step_norm": r.step_norm,
                "seconds": r.seconds} for r in result.history]
    return json.loads(json.dumps({
        "protocol": "du", "session_id": SESSION,
        "parameters": {"parties": parameters.parties, "dimension": parameters.dimension, "method": parameters.method,
                       "epsilon": parameters.epsilon, "rounds": parameters.rounds, "delta": parameters.delta,
                       "secure_aggregation": True},
        "result": {"theta": list(result.theta), "rounds": result.rounds, "history": history, "rejected_shares": {}},
        "privacy": accounting.report(parameters, result.rounds),
        "transcript": transcript(public, None, parameters, SESSION, HOLDERS, result)}))


def _verify(report):
    return PROTOCOLS["du"].verify(report, None, None)


def _with_result(report, alter):
    """The report with its transcript's DuResult altered."""
    changed = copy.deepcopy(report)
    result = du_pb2.DuResult.FromString(unb64(changed["transcript"]["result"]))
    alter(result)
    changed["transcript"]["result"] = b64(result.SerializeToString(deterministic=True))
    return changed


def _rejected(report, match: str | None = None) -> str:
    with pytest.raises(ValueError) as failed:
        _verify(report)
    if match is not None:
        assert match in str(failed.value)
    return str(failed.value)


def test_an_honest_du_report_verifies(report):
    lines = _verify(report)
    assert any("1 rounds: C = Π uploads, every partial decryption's proof repeated" in line for line in lines)
    assert any("privacy recomputed" in line for line in lines)


def test_a_tampered_transcript_is_rejected(report):
    def dropped(result):
        del result.evidence[0].evidence.request.contributions[1]

    def duplicated(result):
        result.evidence[0].evidence.request.contributions.append(result.evidence[0].evidence.request.contributions[0])

    def altered(result):
        contribution = result.evidence[0].evidence.request.contributions[2]
        contribution.ciphertexts.values[0] = bytes(reversed(contribution.ciphertexts.values[0]))

    def swapped(result):
        answers = result.evidence[0].evidence.answers
        first, second = copy.deepcopy(answers[0].partials), copy.deepcopy(answers[1].partials)
        answers[0].partials.CopyFrom(second)
        answers[1].partials.CopyFrom(first)

    def theta(result):
        result.theta[1] += 2**-20

    for alter in (dropped, duplicated, altered, swapped, theta):
        _rejected(_with_result(report, alter))


def test_a_report_that_differs_from_its_transcript_is_rejected(report):
    def edited(path, value):
        return _edited(report, path, value)

    _rejected(edited(("result", "theta"), [t + 1e-6 for t in report["result"]["theta"]]), "θ")
    _rejected(edited(("result", "history"), [{**report["result"]["history"][0],
                                              "participants": [1, 2, 3, 4]}]), "participants")
    _rejected(edited(("result", "history"), [{**report["result"]["history"][0], "step_norm": 0.5}]), "steps")
    _rejected(edited(("result", "rejected_shares"), {"2": "proof of correct decryption does not verify"}),
              "rejected shares")
    _rejected(edited(("parameters", "epsilon"), 0.5), "epsilon")
    _rejected(edited(("privacy", "epsilon_composed_basic"), 0.1), "privacy")
    _rejected(edited(("session_id",), "another"), "another session")


def test_a_report_without_transcript_is_checked_as_far_as_it_allows():
    """The stored baselines (uploads in the clear): their privacy line is recomputed from their parameters."""
    from pathlib import Path

    stored = json.loads((Path(__file__).resolve().parent.parent / "docs" / "results" / "baselines"
                         / "breast-cancer_du.json").read_text())
    assert "no transcript" in _verify(stored)[0]
    _rejected({**stored, "privacy": {**stored["privacy"], "epsilon_composed_basic": 1.0}}, "privacy")
    _rejected({**stored, "parameters": {**stored["parameters"], "rounds": 1}})
