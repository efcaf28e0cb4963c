"""A malicious Du party over real processes (docs/malicious-party.md, "Du"): one claiming n_i = 10^7 weights the
average as if it held nearly all the data unless n_i is held to the operator's public cap; one uploading θ
outside ±B under secure aggregation moves the average unless the decrypted sum is checked."""

import asyncio

import numpy as np
import pytest

from du import reference
from launcher.du_client import run_du_session, session_parameters
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
    assert np.array_equal(np.array(report["result"]["theta"]), expected.final)


@pytest.mark.parametrize("fault", ["du-claim-records", "du-theta-outside"])
def test_under_secure_aggregation_an_over_claim_or_an_upload_outside_b_fails_the_run(pool, fault):
    d = pool.get(3, {3: fault})
    parameters = session_parameters(d.topology, d.client_data, "functional", 1.0, 2, True, local_epochs=10)
    match = "over-claimed its weight" if fault == "du-claim-records" else "leaves \\[−B, B\\]"
    with pytest.raises(Exception, match=match):
        asyncio.run(run_du_session(d.topology, d.client_data, parameters, 30.0, noise_seed=SEED))
