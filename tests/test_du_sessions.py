"""The Du role sides in one process (the twin network), checked against the reference computation."""

import random
from collections import Counter

import numpy as np
import pytest

from aggregator.registry import protocols as aggregator_protocols
from mpdp.learning import datasets
from mpdp.proto.v1 import du_pb2
from mpdp.protocols.du import accounting, reference
from mpdp.protocols.du.objectives import augment
from mpdp.protocols.du.parameters import DuParameters
from mpdp.sessions.identity import AGGREGATOR, CLIENT, party
from mpdp.wire.twin import InProcessNetwork
from party.registry import protocols as party_protocols
from party.resources import PartyResources

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
    assert np.array_equal(np.array(result.theta), expected.released(parameters))
    assert result.rounds == 3 and result.stopped == "round limit 3"
    assert [list(r.participants) for r in result.history] == expected.participants
    assert net.messages == closed_form(5, 3)


def test_secure_aggregation_agrees_with_plain_and_the_server_sees_only_ciphertexts(threshold_key, parts):
    public, _ = threshold_key
    plain = _run(_network(threshold_key, parts), _parameters(public, "ofaa"))
    net = _network(threshold_key, parts)
    to_server = []
    deliver = net.deliver
    net.deliver = lambda envelope, call_id="": (
        to_server.append(envelope) if envelope.receiver == str(AGGREGATOR) else None, deliver(envelope, call_id))
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
    assert ofaa["epsilon_composed_exact"] == pytest.approx(ofaa["epsilon_composed_basic"], rel=1e-3)
    assert accounting.composed_exactly(0.1, 100, 1e-5) < 0.5 * 100 * 0.1
    ofpa = accounting.report(_parameters(public, "ofpa", rounds=10), 10)
    assert ofpa["epsilon_per_round_effective"] is None and "unbounded" in ofpa["sensitivity"]
    functional = accounting.report(_parameters(public, "functional", rounds=4), 4)
    assert functional["epsilon_composed_basic"] == 4.0


def test_bad_uploads_are_refused_and_change_nothing(threshold_key, parts):
    """At the server: wrong round, replay, wrong sizes, non-finite or out-of-range θ, n_i out of range, a party
    outside the run, plaintext under secure aggregation, another role; each refused, the round goes on."""
    from aggregator.du import DuServerSide
    from mpdp.sessions.errors import ProtocolError

    public, _ = threshold_key
    parameters = _parameters(public, "none")
    server = DuServerSide("bad", parameters, 30.0, 0, public, [1, 2, 3, 4, 5], HOLDERS)
    assert len(server.receive(CLIENT, "open", du_pb2.DuOpen())) == 5
    good = du_pb2.DuUpload(round=0, records=10, theta=[0.5] * 31)
    bad = {
        "wrong round": du_pb2.DuUpload(round=1, records=10, theta=[0.5] * 31),
        "short θ": du_pb2.DuUpload(round=0, records=10, theta=[0.5] * 30),
        "NaN": du_pb2.DuUpload(round=0, records=10, theta=[float("nan")] * 31),
        "beyond B": du_pb2.DuUpload(round=0, records=10, theta=[51.0] * 31),
        "no records": du_pb2.DuUpload(round=0, records=0, theta=[0.5] * 31),
        "too many records": du_pb2.DuUpload(round=0, records=10**12, theta=[0.5] * 31),
    }
    for reason, upload in bad.items():
        with pytest.raises(ProtocolError):
            server.receive(party(1), "upload", upload)
        assert not server.uploads, reason
    with pytest.raises(ProtocolError):
        server.receive(party(6), "upload", good)  # not in the run
    with pytest.raises(ProtocolError):
        server.receive(AGGREGATOR, "upload", good)
    with pytest.raises(ProtocolError):
        server.receive(party(1), "partial_decryptions", du_pb2.DuPartialDecryptions())  # out of order
    server.receive(party(1), "upload", good)
    with pytest.raises(ProtocolError):
        server.receive(party(1), "upload", good)  # replay
    assert list(server.uploads) == [1] and server.state.name == "ROUND"
    secure = DuServerSide("bad-secure", _parameters(public, "none", secure=True), 30.0, 0, public, [1, 2, 3, 4, 5],
                        HOLDERS)
    secure.receive(CLIENT, "open", du_pb2.DuOpen())
    with pytest.raises(ProtocolError):
        secure.receive(party(1), "upload", good)  # θ in the clear is refused under secure aggregation


def test_a_party_refuses_out_of_order_models_and_requests(threshold_key, parts):
    from mpdp.sessions.errors import ProtocolError
    from party.du import protocol

    public, shares = threshold_key
    x, y = parts[0]
    own = PartyResources(1, public, shares[0], None, x, y, test_mode=True)
    parameters = _parameters(public, "none")
    opening = du_pb2.DuModel(parameters=parameters.to_proto(), round=0, theta=[0.0] * 31, round_deadline_seconds=5)
    side = protocol(lambda me: own).open("s", party(1), AGGREGATOR, "model", opening)
    assert [o.kind for o in side.receive(AGGREGATOR, "model", opening)] == ["upload"]
    for message in (opening, du_pb2.DuModel(parameters=parameters.to_proto(), round=2, theta=[0.0] * 31)):
        with pytest.raises(ProtocolError):
            side.receive(AGGREGATOR, "model", message)  # a replay, and a round that skips one
    with pytest.raises(ProtocolError):
        side.receive(party(2), "model", du_pb2.DuModel(parameters=parameters.to_proto(), round=1, theta=[0.0] * 31))
    with pytest.raises(ProtocolError):  # no secure aggregation in this run
        side.receive(AGGREGATOR, "decryption_request", du_pb2.DuDecryptionRequest(round=0))
    changed = _parameters(public, "none", rounds=9).to_proto()
    with pytest.raises(ProtocolError):
        side.receive(AGGREGATOR, "model", du_pb2.DuModel(parameters=changed, round=1, theta=[0.0] * 31))
    with pytest.raises(ProtocolError):  # a noise seed outside test mode
        untested = PartyResources(1, public, shares[0], None, x, y, test_mode=False)
        protocol(lambda me: untested).open("t", party(1), AGGREGATOR, "model",
                                          du_pb2.DuModel(parameters=parameters.to_proto(), round=0,
                                                         theta=[0.0] * 31, round_deadline_seconds=5, noise_seed=3))


def test_a_percentage_split_gives_the_parties_their_share_and_the_rest_to_the_test_set():
    data = datasets.load("breast-cancer")
    split = datasets.split_for_teachers(data, 3, np.random.default_rng(1), split="40,30,10")
    assert [len(y) for _, y in split.teacher_parts] == [228, 170, 57] and len(split.test_labels) == 114
    assert len(split.public_features) == 0
    weights = datasets.split_for_teachers(data, 3, np.random.default_rng(1), split="200,100,100")
    assert [len(y) for _, y in weights.teacher_parts] == [190, 94, 95]  # weights of the training rows
    with pytest.raises(ValueError):
        datasets.split_for_teachers(data, 3, np.random.default_rng(1), split="40,30")


def test_a_run_whose_cost_is_unbounded_is_refused_before_any_work(threshold_key, parts):
    from mpdp.sessions.errors import ProtocolError
    from party.du import protocol

    public, shares = threshold_key
    with pytest.raises(ProtocolError):  # 1 000 rounds of ~500 000 noise draws each
        _parameters(public, "functional", rounds=1000, dimension=999)
    x, y = parts[0]
    own = PartyResources(1, public, shares[0], None, x, y, test_mode=True)
    costly = _parameters(public, "none", rounds=1000, local_epochs=10_000, batch_size=1)
    opening = du_pb2.DuModel(parameters=costly.to_proto(), round=0, theta=[0.0] * 31, round_deadline_seconds=5)
    with pytest.raises(ProtocolError):
        protocol(lambda me: own).open("costly", party(1), AGGREGATOR, "model", opening)
