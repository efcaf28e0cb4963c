"""The Hamm role sides in one process (the twin network), checked against the reference computation."""

import math
import random

import numpy as np
import pytest

from aggregator.registry import protocols as aggregator_protocols
from curator.registry import protocols as curator_protocols
from curator.resources import CuratorResources
from mpdp.cryptocore.paillier.keypair import generate_keypair
from mpdp.proto.v1 import hamm_pb2
from mpdp.protocols.hamm import reference
from mpdp.protocols.hamm.charlie import eta_source, train_and_release
from mpdp.protocols.hamm.parameters import HammParameters
from mpdp.protocols.hamm.release import Release
from mpdp.protocols.hamm.votes import vote_slots
from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, party
from mpdp.wire.twin import InProcessNetwork
from party.registry import protocols as party_protocols
from party.resources import PartyResources
from tests.conftest import TEST_KEY_BITS

HOLDERS = [1, 2, 3, 4, 5]
AUX, DIMENSION = 30, 4


class Threshold:
    """A fixed local model: class by a threshold on one feature (different per party)."""

    def __init__(self, number, classes):
        self.number, self.classes = number, classes

    def predict(self, features):
        return (np.floor((features[:, self.number % DIMENSION] + 1) * self.classes / 2).astype(int)
                .clip(0, self.classes - 1))


def _aux(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(AUX, DIMENSION))
    return x / np.linalg.norm(x, axis=1, keepdims=True).max()


def _network(threshold_key, parties, classes, aux, seed=3, per_party_key=True):
    public, shares = threshold_key
    own = {party(i): PartyResources(i, public, shares[i - 1] if i <= len(shares) else None, Threshold(i, classes),
                                    np.zeros((2, DIMENSION)), np.zeros(2), test_mode=True)
           for i in range(1, parties + 1)}
    registries = {identity: party_protocols(own.__getitem__) for identity in own}
    numbers = list(range(1, parties + 1))
    registries[AGGREGATOR] = aggregator_protocols(public, numbers, HOLDERS)
    registries[CURATOR] = curator_protocols(CuratorResources(generate_keypair(TEST_KEY_BITS), public, numbers, HOLDERS,
                                                             aux, test_mode=True))
    return InProcessNetwork("hamm", registries, random.Random(seed)), own


def _parameters(public, parties, classes, method="soft", epsilon=2.0, noisy=False, count_noise="binomial"):
    return HammParameters(method, epsilon, 1e-5, 0.01, classes, parties, AUX, DIMENSION, noisy, False, 2 / 3,
                          public.key_id, count_noise)


def _open(net, parameters, seed=11):
    net.send(CLIENT, CURATOR, "hamm", "open", hamm_pb2.HammOpen(parameters=parameters.to_proto(), deadline_seconds=30,
                                                                noise_seed=seed))
    net.run()
    assert not net.refused, net.refused


@pytest.mark.parametrize("classes, method, noisy, count_noise", [
    (2, "soft", False, "binomial"), (2, "vote", True, "binomial"), (3, "soft", True, "binomial"),
    (3, "vote", False, "binomial"), (2, "vote", True, "skellam"), (3, "soft", True, "skellam")])
def test_the_twin_equals_the_reference(threshold_key, classes, method, noisy, count_noise):
    public, _ = threshold_key
    parties = 7
    aux = _aux()
    net, own = _network(threshold_key, parties, classes, aux)
    parameters = _parameters(public, parties, classes, method, noisy=noisy, count_noise=count_noise)
    _open(net, parameters)
    charlie = net.sides[CURATOR]
    assert charlie.state.name == "DONE", charlie.abort_reason
    voters = [net.sides[party(i)] for i in range(1, parties + 1)]
    votes = [v.drawn.votes for v in voters]
    noise = [v.drawn.noise for v in voters]
    assert all(np.array_equal(v, vote_slots(own[party(i + 1)].model.predict(aux), classes)) for i, v in enumerate(votes))
    expected_counts = reference.counts(parameters, votes, noise)
    assert np.array_equal(np.array(charlie.drawn.counts).reshape(AUX, classes), expected_counts)
    if not noisy:
        assert expected_counts.sum(axis=1).tolist() == [parties] * AUX  # every voter voted once per point
    outcome = train_and_release(parameters, aux, expected_counts, parties, eta_source(11))
    _, result = charlie.result()
    assert np.array_equal(np.array(result.weights), outcome.released.ravel())
    assert (np.linalg.norm(outcome.eta) == 0) == noisy  # noisy counts: the release is post-processing
    holders = len(HOLDERS)
    assert net.messages == {("client", "curator", "Step/hamm/open"): 1,
                            ("curator", "aggregator", "Step/hamm/queries"): 1,
                            ("aggregator", "party", "Step/hamm/queries"): parties,
                            ("party", "aggregator", "Step/hamm/votes"): parties,
                            ("aggregator", "party", "Step/hamm/decryption_request"): holders,
                            ("aggregator", "curator", "Step/hamm/aggregate"): 1,
                            ("party", "curator", "Step/hamm/partial_decryptions"): holders}


def test_charlie_receives_counts_only_and_the_aggregator_no_plaintext(threshold_key):
    """Everything Charlie is sent: X_aux's echo never, one aggregate of ciphertexts, proven shares of it."""
    public, _ = threshold_key
    net, _ = _network(threshold_key, 6, 2, _aux())
    _open(net, _parameters(public, 6, 2))
    kinds = {label for (_, to, label), count in net.messages.items() if to == "curator"}
    assert kinds == {"Step/hamm/open", "Step/hamm/aggregate", "Step/hamm/partial_decryptions"}
    assert {label for (frm, to, label) in net.messages if to == "aggregator"} == {"Step/hamm/queries",
                                                                                   "Step/hamm/votes"}


def test_the_reference_with_dropouts_uses_m_prime(threshold_key):
    public, _ = threshold_key
    parameters = _parameters(public, 9, 2, "soft")
    aux = _aux()
    models = [Threshold(i, 2) for i in range(1, 7)]
    counts, outcome = reference.session(parameters, aux, models, random.Random(1))
    assert counts.sum(axis=1).tolist() == [6] * AUX
    assert math.isclose(Release(parameters, 6).model_sensitivity, 2 / (6 * 0.01))
    assert outcome.released.shape == (DIMENSION,)


@pytest.mark.parametrize("unreachable, completes", [([4, 5], True), ([2, 3, 4], False)])
def test_charlie_stops_waiting_for_holders_the_aggregator_could_not_reach(threshold_key, unreachable, completes):
    """t = 3 of 5: with two holders unreachable Charlie combines the other three at once; with three it
    aborts at once. Neither waits for its deadline. Only the aggregator may report a holder."""
    public, _ = threshold_key
    net, _ = _network(threshold_key, 6, 2, _aux())
    net.send(CLIENT, CURATOR, "hamm", "open", hamm_pb2.HammOpen(parameters=_parameters(public, 6, 2).to_proto(),
                                                                deadline_seconds=30))
    net.run(stop_when=lambda n: AGGREGATOR in n.sides and n.sides[AGGREGATOR].state.name == "HANDED_ON")
    aggregator = net.sides[AGGREGATOR]
    for holder in unreachable:  # the requests are lost, and the aggregator hears of it
        net._queues[(AGGREGATOR, party(holder))].clear()
        notices = aggregator.on_undeliverable(party(holder), "decryption_request", "UNAVAILABLE: connection refused")
        assert [(o.to, o.kind) for o in notices] == [(CURATOR, "holder_unreachable")]
        net._post(AGGREGATOR, net.registries[AGGREGATOR]["hamm"], notices)
    net.send(party(1), CURATOR, "hamm", "holder_unreachable", hamm_pb2.HolderUnreachable(holder=2, reason="forged"))
    net.run()
    assert any(label == "Step/hamm/holder_unreachable" and "aggregator does" in reason
               for sender, _, label, reason in net.refused if sender == party(1))
    charlie = net.sides[CURATOR]
    if completes:
        assert charlie.state.name == "DONE" and list(charlie.released.decryptors) == [1, 2, 3]
    else:
        assert charlie.state.name == "ABORTED" and charlie.released is None
