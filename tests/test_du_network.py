"""Du over real processes (1024-bit keys, loopback, mutual TLS), checked against the reference."""

import asyncio
import json

import numpy as np
import pytest

from launcher.protocols.du.client import run_du_session, session_parameters
from launcher.registry import PROTOCOLS
from mpdp.learning import datasets
from mpdp.protocols.du import reference
from mpdp.protocols.du.objectives import augment
from tests.test_dppp_network import observed_counts
from tests.test_du_sessions import closed_form

SEED = 7


def _parts(d):
    return [(augment(x), y.astype(float)) for x, y, _ in (datasets.load_part(e.data) for e in d.topology.parties)]


def _run(d, method="functional", secure=False, rounds=3, deadline=300.0, **options):  # deadlines bound failures only
    parameters = session_parameters(d.topology, d.client_data, method, 1.0, rounds, secure, local_epochs=10,
                                    **options)
    return parameters, asyncio.run(run_du_session(d.topology, d.client_data, parameters, deadline,
                                                  noise_seed=SEED))


@pytest.fixture
def three(pool):
    return pool.get(3)


def test_rounds_equal_the_reference_plain_and_secure(three):
    parameters, plain = _run(three)
    expected = reference.run(parameters, _parts(three), SEED)
    assert np.array_equal(np.array(plain["result"]["theta"]), expected.released(parameters))
    assert observed_counts(plain) == closed_form(3, 3, client_rpc="AwaitResult")
    assert plain["privacy"]["epsilon_composed_basic"] == 3.0
    _, secure = _run(three, secure=True)
    assert np.max(np.abs(np.array(secure["result"]["theta"]) - expected.released(parameters))) <= 2**-20
    assert observed_counts(secure) == closed_form(3, 3, holders=3, client_rpc="AwaitResult")
    # The server is sent uploads (ciphertexts only, by the twin test) and proven shares; parties get only θ_k.
    to_server = {row["rpc"] for row in secure["traffic_detail"] if row["to"] == "aggregator/0"}
    assert to_server == {"AwaitResult/du/open", "Step/du/upload", "Step/du/partial_decryptions"}
    to_parties = {row["rpc"] for row in secure["traffic_detail"] if row["to"].startswith("party/")}
    assert to_parties == {"Step/du/model", "Step/du/decryption_request"}
    # `mpdp verify` (through the registry): the secure run's transcript, signatures under the deployment's CA
    # included, re-checks every round; the run in the clear is consistent as far as it can be checked.
    verify = PROTOCOLS["du"].verify
    assert any("signed by their senders under the CA" in line for line in verify(json.loads(json.dumps(secure)),
                                                                                 None, None))
    assert "no transcript" in verify(json.loads(json.dumps(plain)), None, None)[0]


def test_a_party_that_stops_uploading_is_dropped_and_the_weights_renormalised(pool):
    d = pool.get(3, {3: "drop:Step/du/upload"}, allow_unproven=True)  # OFAA: the parties' operator allows it
    # Round 0 waits out its deadline for party 3: long enough for the honest parties' uploads on a busy machine.
    parameters, report = _run(d, method="ofaa", rounds=2, deadline=20.0)
    assert report["result"]["dropped"] == [3]
    assert [r["participants"] for r in report["result"]["history"]] == [[1, 2], [1, 2]]
    expected = reference.run(parameters, _parts(d), SEED, dropped_after={3: 0})
    assert np.array_equal(np.array(report["result"]["theta"]), expected.released(parameters))
