"""Over real processes: an aggregator that lies to the client (tests/lying_aggregator.py: the real aggregator's
code and certificate, its released result altered) is caught by the real client code, which releases nothing
and names the aggregator (docs/client-checks.md). One shared deployment; its honest aggregator comes back after."""

import secrets

import pytest

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
