"""A malicious Du party over real processes (docs/malicious-party.md, "Du"; docs/malicious-party-du.md): one
claiming n_i = 10^7 weights the average as if it held nearly all the data unless n_i is held to the operator's
public cap; one uploading θ outside ±B under secure aggregation moves the average unless its range proof is
checked. In the clear and under secure aggregation alike the party is refused by name and the run goes on
without it."""

import asyncio

import numpy as np
import pytest

from launcher.protocols.du.client import run_du_session, session_parameters
from mpdp.protocols.du import reference
from tests.test_du_network import SEED, _parts, _run


def test_the_cap_on_n_i_is_the_operators_largest_part(pool):
    d = pool.get(3)
    parameters = session_parameters(d.topology, d.client_data, "functional", 1.0, 2)
    assert parameters.records_cap == max(int(s) for s in d.client_data["party_sizes"]) < 10**7


def test_a_party_claiming_ten_million_records_in_the_clear_is_refused_and_dropped(pool):
    d = pool.get(3, {3: "du-claim-records"})
    parameters, report = _run(d, rounds=2, deadline=60.0)  # party 3 is refused at once: no round waits it out
    assert report["result"]["dropped"] == [3]
    expected = reference.run(parameters, _parts(d), SEED, dropped_after={3: 0})
    assert np.array_equal(np.array(report["result"]["theta"]), expected.released(parameters))


@pytest.mark.parametrize("fault", ["du-claim-records", "du-theta-outside"])
def test_under_secure_aggregation_an_over_claim_or_an_upload_outside_b_is_refused_by_its_range_proof(pool, fault):
    d = pool.get(4, {3: fault})  # t = 3 of 4 holders: party 3, dropped, decrypts no later round
    parameters = session_parameters(d.topology, d.client_data, "functional", 1.0, 2, True, local_epochs=10)
    report = asyncio.run(run_du_session(d.topology, d.client_data, parameters, 300.0, noise_seed=SEED))  # a deadline for failures only: load must not drop an honest party
    assert report["result"]["dropped"] == [3]
    assert list(report["result"]["rejected_uploads"]) == ["3"]
    assert "range proof failed in round 0" in report["result"]["rejected_uploads"]["3"]
    expected = reference.run(parameters, _parts(d), SEED, dropped_after={3: 0})
    assert np.max(np.abs(np.array(report["result"]["theta"]) - expected.released(parameters))) <= 2**-20
