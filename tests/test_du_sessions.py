"""The Du role sides in one process (the twin network), checked against the reference computation."""

import random
from collections import Counter

import numpy as np
import pytest

from aggregator.registry import protocols as aggregator_protocols
from du import accounting, reference
from du.objectives import augment
from du.parameters import DuParameters
from learning import datasets
from mpdp_proto.v1 import du_pb2
from party.registry import protocols as party_protocols
from party.resources import PartyResources
from sessions.identity import AGGREGATOR, CLIENT, party
from wire.twin import InProcessNetwork

HOLDERS = [1, 2, 3, 4, 5]
SEED = 5


@pytest.fixture(scope="module")
def parts():
    """Breast cancer split 40/30/10/10/10 % among five parties (labels 0/1)."""
    data = datasets.load("breast-cancer")
    order = np.random.default_rng(0).permutation(len(data.labels))[:400]
    cuts = np.cumsum([160, 120, 40, 40])
    return [(data.features[i], data.labels[i]) for i in np.split(order, cuts)]


def _parameters(public, method="functional", secure=False, rounds=3, parties=5, **changes):
    options = dict(method=method, epsilon=1.0, delta=1e-5, rounds=rounds, tolerance=0.0, local_epochs=5,
                   learning_rate=1.0, regularization=0.01, parties=parties, dimension=30, bound=50.0,
                   secure_aggregation=secure, honest_fraction=2 / 3, key_id=public.key_id)
    options.update(changes)
    return DuParameters(**options)


def _network(threshold_key, parts, seed=3):
    public, shares = threshold_key
    own = {party(i): PartyResources(i, public, shares[i - 1] if i <= len(shares) else None, None, x, y,
                                    test_mode=True) for i, (x, y) in enumerate(parts, start=1)}
    registries = {identity: party_protocols(own.__getitem__) for identity in own}
    registries[AGGREGATOR] = aggregator_protocols(public, list(range(1, len(parts) + 1)), HOLDERS)
    return InProcessNetwork("du", registries, random.Random(seed))


def _run(net, parameters):
    net.send(CLIENT, AGGREGATOR, "du", "open", du_pb2.DuOpen(parameters=parameters.to_proto(),
                                                              round_deadline_seconds=30, noise_seed=SEED))
    net.run()
    assert not net.refused, net.refused
    return net.sides[AGGREGATOR].released


def closed_form(parties: int, rounds: int, holders: int = 0, client_rpc: str = "Step") -> Counter:
    """Per run: θ_k to every party and an upload back per round, the final model; with secure aggregation
    a decryption request to and proven partials from every holder per round."""
    counts = Counter({("client", "aggregator", f"{client_rpc}/du/open"): 1,
                      ("aggregator", "party", "Step/du/model"): parties * (rounds + 1),
                      ("party", "aggregator", "Step/du/upload"): parties * rounds})
    if holders:
        counts[("aggregator", "party", "Step/du/decryption_request")] = holders * rounds
        counts[("party", "aggregator", "Step/du/partial_decryptions")] = holders * rounds
    return counts


@pytest.mark.parametrize("method", ["ofpa", "ofaa", "objective", "functional", "none"])
def test_the_twin_equals_the_reference(threshold_key, parts, method):
    public, _ = threshold_key
    parameters = _parameters(public, method)
    net = _network(threshold_key, parts)
    result = _run(net, parameters)
    expected = reference.run(parameters, [(augment(x), y.astype(float)) for x, y in parts], SEED)
    assert np.array_equal(np.array(result.theta), expected.final)
    assert result.rounds == 3 and result.stopped == "round limit 3"
    assert [list(r.participants) for r in result.history] == expected.participants
    assert net.messages == closed_form(5, 3)


def test_secure_aggregation_agrees_with_plain_and_the_server_sees_only_ciphertexts(threshold_key, parts):
    public, _ = threshold_key
    plain = _run(_network(threshold_key, parts), _parameters(public, "ofaa"))
    net = _network(threshold_key, parts)
    to_server = []
    deliver = net.deliver
    net.deliver = lambda envelope: (to_server.append(envelope) if envelope.receiver == str(AGGREGATOR) else None,
                                    deliver(envelope))
    secure = _run(net, _parameters(public, "ofaa", secure=True))
    assert np.max(np.abs(np.array(secure.theta) - np.array(plain.theta))) <= 2**-20
    assert net.messages == closed_form(5, 3, holders=5)
    # Everything the server was sent by parties: uploads of ciphertexts only (no θ_ik, no n_i), and proven
    # partial decryptions of each round's sum.
    kinds = {envelope.du.WhichOneof("body") for envelope in to_server if envelope.sender != str(CLIENT)}
    assert kinds == {"upload", "partial_decryptions"}
    uploads = [envelope.du.upload for envelope in to_server if envelope.du.WhichOneof("body") == "upload"]
    assert len(uploads) == 15 and all(not u.theta and not u.records and u.encrypted.values for u in uploads)


def test_the_report_states_paper_and_composed_epsilon(threshold_key):
    public, _ = threshold_key
    ofaa = accounting.report(_parameters(public, "ofaa", rounds=10), 10)
    assert ofaa["calibration"] == "paper calibration, not proven DP"
    assert ofaa["epsilon_per_round_effective"] == pytest.approx(4 / 3)  # the two orders' budgets add up
    assert ofaa["epsilon_composed_basic"] == pytest.approx(10 * 4 / 3)
    # PLD accounting of pure-ε rounds: no better than R·ε at large ε (discretisation adds a hair), much
    # better for many small rounds.
    assert ofaa["epsilon_composed_accountant"] == pytest.approx(ofaa["epsilon_composed_basic"], rel=1e-3)
    assert accounting.composed_with_accountant(0.1, 100, 1e-5) < 0.5 * 100 * 0.1
    ofpa = accounting.report(_parameters(public, "ofpa", rounds=10), 10)
    assert ofpa["epsilon_per_round_effective"] is None and "unbounded" in ofpa["sensitivity"]
    functional = accounting.report(_parameters(public, "functional", rounds=4), 4)
    assert functional["epsilon_composed_basic"] == 4.0
