"""A malicious Pathak party over real processes (docs/malicious-party.md, "Pathak"): a Stage 3 share off by 2^100
moves ŵˢ anywhere unless the client checks the reconstructed sum against the honest range; it does, names the
session as failed and publishes nothing."""

import numpy as np
import pytest

from launcher.protocols.pathak.client import SessionFailed, check_honest_range
from mpdp.learning import datasets
from mpdp.learning.pathak_local import train
from mpdp.protocols.pathak.noise import noise_source
from mpdp.protocols.pathak.reference import distributed_average
from tests.test_pathak_network import SEED


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


def test_under_distributed_noise_a_party_adding_no_share_leaves_the_stated_guarantee(pool):
    """The distributed analogue of under-reporting n_j: party 2 adds no noise. The release carries the other
    K − 1 shares, which is all the accounting counts on, so the ε the report states still holds."""
    d = pool.get(3, {2: "no-noise-share"}, "10")
    sizes = [int(s) for s in d.client_data["party_sizes"]]
    options = dict(noise_seed=SEED, mechanism="gaussian", noise_source="distributed", calibrate_to="n_min",
                   n_min=min(sizes))
    report = d.run_pathak(**options)
    parameters = d.pathak_parameters(**options)
    models, shares = [], []
    for entry in d.topology.parties:
        features, labels, _ = datasets.load_part(entry.data)
        models.append(train(features, labels, parameters.regularization, parameters.gradient_tolerance))
        share = parameters.distributed_noise.sample(noise_source(SEED, entry.identity.id))
        shares.append([0] * len(share) if entry.identity.id == 2 else share)
    assert np.max(np.abs(np.array(report["result"]["w"]) - distributed_average(models, shares,
                                                                                parameters.fractional_bits))) <= 2**-20
    privacy = report["privacy"]
    assert privacy["shares_counted"] == parameters.parties - 1
    assert privacy["epsilon_effective"] <= parameters.epsilon * (1 + 1e-9)
