"""Over real processes: an aggregator that lies to the client (tests/lying_aggregator.py: the real aggregator's
code and certificate, its released result altered) is caught by the real client code, which releases nothing
and names the aggregator (docs/client-checks.md). One shared deployment; its honest aggregator comes back after."""

import base64
import json
import secrets

import pytest

from launcher.cli import main
from mpdp.proto.v1 import dppp_pb2
from mpdp.sessions.errors import Kind, ProtocolError
from mpdp.sessions.identity import AGGREGATOR
from tests.dppp_faults import FAULTS_K5
from tests.lying_aggregator import substitute


@pytest.fixture(scope="module")
def liar(pool):
    deployment = pool.get(5, FAULTS_K5)
    substitute(deployment)
    try:
        yield deployment
    finally:
        deployment.restart(AGGREGATOR)


def _refused(liar, lie: str) -> str:
    with pytest.raises(ProtocolError) as raised:
        liar.run_dppp(session_id=f"lie-{lie}-{secrets.token_hex(4)}", queries=6)
    assert raised.value.kind is Kind.ABORTED
    message = str(raised.value)
    assert message.startswith("the aggregator lied") and message.endswith("nothing is released")
    return message


def test_labels_off_the_argmax_are_caught(liar):
    assert "labels" in _refused(liar, "labels")


def test_an_inflated_contributor_count_is_caught(liar):
    assert "contributors [1, 2, 3, 4, 5]" in _refused(liar, "inflate")


def test_a_deflated_contributor_count_is_caught(liar):
    assert "insufficient noise" in _refused(liar, "deflate")


def test_false_blame_is_caught(liar):
    assert "teacher" in _refused(liar, "blame")


def test_the_same_deployment_releases_an_honest_round(liar):
    report = liar.run_dppp(session_id=f"honest-{secrets.token_hex(4)}", queries=6)
    assert report["result"]["contributors"] == [1, 2, 3, 4, 5]
    assert report["timing"]["client_checks"] > 0


# ---------------------------------------------------------------- `mpdp verify` on a report of this deployment

@pytest.fixture(scope="module")
def honest_report(liar):
    return liar.run_dppp(session_id=f"verified-{secrets.token_hex(4)}", queries=6)


def _verify(tmp_path, report) -> int:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    return main(["verify", str(path)])


def _altered(report, change_result=None, change_report=None):
    copy = json.loads(json.dumps(report))
    if change_result is not None:
        result = dppp_pb2.DpppRoundResult.FromString(base64.b64decode(copy["transcript"]["result"]))
        change_result(result)
        copy["transcript"]["result"] = base64.b64encode(result.SerializeToString()).decode()
    if change_report is not None:
        change_report(copy)
    return copy


def test_verify_accepts_the_honest_report(tmp_path, honest_report, capsys):
    assert _verify(tmp_path, honest_report) == 0
    out = capsys.readouterr().out
    assert "verified" in out and "message counts match the closed form" in out


def _drop(result):
    del result.evidence.request.contributions[0]


def _duplicate(result):
    result.evidence.request.contributions.append(result.evidence.request.contributions[0])


def _alter(result):
    contributions = result.evidence.request.contributions
    contributions[0].ciphertexts.values[0] = contributions[1].ciphertexts.values[0]


def _swap_proofs(result):
    first, second = result.evidence.answers[0].partials, result.evidence.answers[1].partials
    first.response, second.response = second.response, first.response


def _relabel(result):
    result.labels[0] = (result.labels[0] + 1) % result.classes


def _label_in_report(report):
    report["result"]["labels"][0] = 1 - report["result"]["labels"][0]


def _epsilon_in_report(report):
    report["privacy"]["epsilon_all_queries"] *= 0.9


@pytest.mark.parametrize("change_result, change_report", [
    (_drop, None), (_duplicate, None), (_alter, None), (_swap_proofs, None), (_relabel, None),
    (None, _label_in_report), (None, _epsilon_in_report)],
    ids=["dropped", "duplicated", "altered", "swapped-proof", "wrong-label-transcript", "wrong-label-report",
         "wrong-epsilon"])
def test_verify_rejects_an_altered_report(tmp_path, honest_report, change_result, change_report, capsys):
    assert _verify(tmp_path, _altered(honest_report, change_result, change_report)) == 1
    assert "does not verify" in capsys.readouterr().err
