"""A malicious Pathak party over real processes (docs/malicious-party.md, "Pathak"): a Stage 3 share off by 2^100
moves ŵˢ anywhere unless the client checks the reconstructed sum against the honest range; it does, names the
session as failed and publishes nothing."""

import pytest

from launcher.pathak_client import SessionFailed, check_honest_range


@pytest.mark.parametrize("noise_source", ["distributed", "selected"])
def test_an_out_of_range_stage3_share_fails_the_session_and_publishes_nothing(pool, noise_source):
    d = pool.get(3, {2: "stage3-offset"}, "10")
    sizes = [int(s) for s in d.client_data["party_sizes"]]
    options = dict(mechanism="gaussian", noise_source=noise_source,
                   calibrate_to="n_min" if noise_source == "distributed" else "n_1", n_min=min(sizes))
    with pytest.raises(SessionFailed, match=r"Pathak session offset-\w+ failed: .*honest range"):
        d.run_pathak(session_id=f"offset-{noise_source}", **options)


def test_the_honest_range_admits_the_largest_honest_sum_and_nothing_beyond(pool):
    d = pool.get(3, None, "10")
    parameters = d.pathak_parameters(mechanism="gaussian")
    bound = parameters.honest_sum_bound
    check_honest_range(parameters, [bound, -bound] + [0] * (parameters.dimension - 2), "s")
    with pytest.raises(SessionFailed, match="1 of"):
        check_honest_range(parameters, [bound + 1] + [0] * (parameters.dimension - 1), "s")
