"""The DPPP role sides in one process, checked against the reference computation."""

import dataclasses
import random

import numpy as np
import pytest

from aggregator.dppp import DpppAggregatorSide
from aggregator.registry import protocols as aggregator_protocols
from mpdp.cryptocore.errors import CryptoError
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.privacy.binomial import MAX_TOTAL_TOSSES
from mpdp.proto.v1 import common_pb2, dppp_pb2, threshold_sum_pb2
from mpdp.protocols.dppp.parameters import DpppParameters, default_threshold
from mpdp.protocols.dppp.reference import noisy_histograms
from mpdp.sessions.errors import Kind, ProtocolError, from_crypto
from mpdp.sessions.identity import AGGREGATOR, CLIENT, party
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.wire.twin import InProcessNetwork
from party.dppp import DpppTeacherSide
from party.registry import protocols as party_protocols
from party.resources import PartyResources

QUERIES, CLASSES, TEACHERS = 7, 3, 5
HOLDERS = list(range(1, 6))


class SignClassifier:
    """A fixed local model: class by the sign pattern of two features."""

    def __init__(self, offset):
        self.offset = offset

    def predict(self, features):
        return ((features[:, 0] > 0).astype(int) + self.offset) % CLASSES


def _resources(public, shares, number, model=None):
    return PartyResources(number, public, shares[number - 1], model or SignClassifier(number), np.zeros((2, 4)),
                          np.zeros(2), test_mode=True)


@pytest.fixture
def setup(threshold_key):
    public, shares = threshold_key
    parameters = DpppParameters.with_minimal_noise(8.0, 1e-5, QUERIES, CLASSES, TEACHERS, 2 / 3, True, public.key_id)
    parameters.calibrate()
    features = np.random.default_rng(0).normal(size=(QUERIES, 4))
    teachers = [DpppTeacherSide("s1", _resources(public, shares, i), parameters, features, 60.0)
                for i in range(1, TEACHERS + 1)]
    rnd = DpppAggregatorSide("s1", parameters, matrix_to_proto(features), 60.0, public, list(range(1, TEACHERS + 1)), HOLDERS)
    queries = rnd.receive(CLIENT, "open", dppp_pb2.DpppRoundRequest())
    assert [q.to for q in queries] == [party(i) for i in range(1, TEACHERS + 1)]
    return public, parameters, teachers, rnd


def _vote_all(teachers, rnd, skip=()):
    """Every teacher's votes to the round; returns the round's decryption requests (once all are in)."""
    out = []
    for teacher in teachers:
        if teacher.own.id not in skip:
            out = rnd.receive(party(teacher.own.id), "votes", teacher.cast_votes())
    return out


def _decrypt(teachers, rnd, requests, holders):
    request = requests[0].body
    for teacher in teachers:
        if teacher.own.id in holders:
            rnd.receive(party(teacher.own.id), "partial_decryptions", teacher.partially_decrypt(request))


def _request(key_id, senders, values) -> threshold_sum_pb2.DecryptionRequest:
    """A request naming `senders`, each with the same (unsigned) ciphertexts: in-process sides hold no TLS keys."""
    return threshold_sum_pb2.DecryptionRequest(contributions=[threshold_sum_pb2.Contribution(
        sender=s, ciphertexts=common_pb2.Ciphertexts(key_id=key_id, values=values)) for s in senders])


def _histograms(rnd) -> np.ndarray:
    kind, result = rnd.result()
    return np.array(result.histograms).reshape(QUERIES, CLASSES)


def test_round_equals_reference(setup):
    public, parameters, teachers, rnd = setup
    requests = _vote_all(teachers, rnd)
    assert [r.to for r in requests] == [party(h) for h in HOLDERS[:public.threshold]]  # exactly t asked
    assert rnd.state.name == "DECRYPTING"
    _decrypt(teachers, rnd, requests, holders={1, 2})
    replacement = rnd.on_undeliverable(party(3), "decryption_request", "unreachable")
    assert [(r.to, r.kind) for r in replacement] == [(party(4), "decryption_request")]
    stand_down = rnd.receive(party(4), "partial_decryptions", teachers[3].partially_decrypt(requests[0].body))
    assert rnd.state.name == "DONE" and [(r.to, r.kind) for r in stand_down] == [(party(5), "stand_down")]
    assert teachers[4].receive(AGGREGATOR, "stand_down", stand_down[0].body) == [] and teachers[4].finished
    expected = noisy_histograms([t.drawn.votes for t in teachers], [t.drawn.noise for t in teachers],
                                parameters.calibration.tosses_per_teacher)
    assert np.array_equal(_histograms(rnd), expected)
    assert list(rnd.result()[1].decryptors) == [1, 2, 4]


def test_a_silent_holder_widens_the_request_to_everyone_left_once(setup):
    """Holder 3 took the request and never answered: at the deadline every holder left is asked; at the
    next deadline the round combines what verified."""
    _, _, teachers, rnd = setup
    requests = _vote_all(teachers, rnd)
    _decrypt(teachers, rnd, requests, holders={1, 2})
    widened = rnd.on_deadline()
    assert [r.to for r in widened] == [party(4), party(5)] and rnd.state.name == "DECRYPTING"
    rnd.receive(party(5), "partial_decryptions", teachers[4].partially_decrypt(requests[0].body))
    assert rnd.state.name == "DECRYPTING"  # 4 was asked as well: its share (or its failure) is awaited
    assert rnd.on_deadline() == [] and rnd.state.name == "DONE"
    assert list(rnd.result()[1].decryptors) == [1, 2, 5]


@pytest.mark.parametrize("noise", ["binomial", "skellam"])
def test_the_twin_network_with_the_registries_equals_the_reference(threshold_key, noise):
    """Client → aggregator → teachers and back, every message serialised, delivered in a random order."""
    public, shares = threshold_key
    parameters = DpppParameters.with_minimal_noise(8.0, 1e-5, QUERIES, CLASSES, TEACHERS, 2 / 3, True, public.key_id,
                                                   noise)
    features = np.random.default_rng(1).normal(size=(QUERIES, 4))
    own = {party(i): _resources(public, shares, i) for i in range(1, TEACHERS + 1)}
    registries = {identity: party_protocols(own.__getitem__) for identity in own}
    registries[AGGREGATOR] = aggregator_protocols(public, list(range(1, TEACHERS + 1)), HOLDERS)
    net = InProcessNetwork("twin", registries, random.Random(3))
    request = dppp_pb2.DpppRoundRequest(parameters=parameters.to_proto(), features=matrix_to_proto(features),
                                        deadline_seconds=30)
    net.send(CLIENT, AGGREGATOR, "dppp", "open", request)
    net.run()
    assert not net.refused and net.sides[AGGREGATOR].state.name == "DONE"
    teachers = [net.sides[party(i)] for i in range(1, TEACHERS + 1)]
    expected = noisy_histograms([t.drawn.votes for t in teachers], [t.drawn.noise for t in teachers],
                                parameters.share_range)
    assert np.array_equal(_histograms(net.sides[AGGREGATOR]), expected)
    k, holders, t = TEACHERS, len(HOLDERS), public.threshold
    assert net.messages == {("client", "aggregator", "Step/dppp/open"): 1,
                            ("aggregator", "party", "Step/dppp/queries"): k,
                            ("party", "aggregator", "Step/dppp/votes"): k,
                            ("aggregator", "party", "Step/dppp/decryption_request"): t,
                            ("party", "aggregator", "Step/dppp/partial_decryptions"): t,
                            ("aggregator", "party", "Step/dppp/stand_down"): holders - t}
    assert all(side.finished for side in net.sides.values())


def test_one_teacher_missing_is_tolerated(setup):
    _, parameters, teachers, rnd = setup
    _vote_all(teachers, rnd, skip={3})
    requests = rnd.on_undeliverable(party(3), "queries", "unreachable")
    assert list(rnd.collector.contributors) == [1, 2, 4, 5]
    assert [r.to for r in requests] == [party(1), party(2), party(4)]  # contributors are asked first
    _decrypt(teachers, rnd, requests, holders={1, 2})
    assert [r.to for r in rnd.on_undeliverable(party(4), "decryption_request", "unreachable")] == [party(5)]
    _decrypt(teachers, rnd, requests, holders={5})
    assert rnd.state.name == "DONE"
    present = [t for t in teachers if t.own.id != 3]
    expected = noisy_histograms([t.drawn.votes for t in present], [t.drawn.noise for t in present],
                                parameters.calibration.tosses_per_teacher)
    assert np.array_equal(_histograms(rnd), expected)


def test_two_missing_teachers_abort(setup):
    _, _, teachers, rnd = setup
    _vote_all(teachers, rnd, skip={4, 5})
    with pytest.raises(ProtocolError) as raised:
        rnd.on_deadline()
    assert raised.value.kind is Kind.ABORTED and rnd.finished and not rnd.collector.contributions
    # the line says why the two are missing, so the user knows a longer --deadline is the remedy
    assert "parties 4, 5: no vote within the session's deadline" in str(raised.value)


def _kind(action) -> Kind:
    """The error kind the servicer would report (crypto rejections map as in mpdp.wire.status)."""
    with pytest.raises((ProtocolError, CryptoError)) as raised:
        action()
    error = raised.value
    return (from_crypto(error) if isinstance(error, CryptoError) else error).kind


def _votes(tosses, key_id, values):
    return dppp_pb2.DpppVotes(tosses=tosses, votes=common_pb2.Ciphertexts(key_id=key_id, values=values))


def test_bad_votes_are_refused_and_change_nothing(setup, other_keypair):
    public, parameters, teachers, rnd = setup
    ballot = teachers[0].cast_votes()
    tosses, ciphertexts, key_id = ballot.tosses, list(ballot.votes.values), public.key_id
    send = lambda sender, votes: lambda: rnd.receive(sender, "votes", votes)  # noqa: E731
    attempts = {
        Kind.PERMISSION_DENIED: [send(party(9), ballot), send(CLIENT, ballot), send(AGGREGATOR, ballot)],
        Kind.INVALID_ARGUMENT: [send(party(1), _votes(tosses - 2, key_id, ciphertexts)),
                                send(party(1), _votes(tosses, other_keypair.public.key_id, ciphertexts)),
                                send(party(1), _votes(tosses, key_id, ciphertexts * 2)),
                                send(party(1), _votes(tosses, key_id, [b"\x00" * 256])),
                                send(party(1), _votes(tosses, key_id, [ciphertexts[0][:-1]]))],
        Kind.FAILED_PRECONDITION: [lambda: rnd.receive(party(1), "partial_decryptions",
                                                       threshold_sum_pb2.PartialDecryptions())],
    }
    for kind, actions in attempts.items():
        for action in actions:
            assert _kind(action) is kind
            assert rnd.collector.contributions == {} and rnd.state.name == "COLLECTING"
    rnd.receive(party(1), "votes", ballot)
    assert _kind(send(party(1), ballot)) is Kind.FAILED_PRECONDITION
    assert list(rnd.collector.contributions) == [1]
    assert _kind(lambda: rnd.receive(CLIENT, "open", dppp_pb2.DpppRoundRequest())) is Kind.FAILED_PRECONDITION


def test_bad_share_is_named_and_the_holder_cannot_retry(setup):
    _, _, teachers, rnd = setup
    requests = _vote_all(teachers, rnd)
    partials = teachers[1].partially_decrypt(requests[0].body)
    forged = threshold_sum_pb2.PartialDecryptions()
    forged.CopyFrom(partials)
    response = int.from_bytes(forged.response, "big") + 1
    forged.response = response.to_bytes((response.bit_length() + 7) // 8, "big")
    with pytest.raises(Exception, match="holder 2"):
        rnd.receive(party(2), "partial_decryptions", forged)
    assert 2 in rnd.combiner.rejected and 2 not in rnd.combiner.partials
    assert [(r.to, r.kind) for r in rnd.poll()] == [(party(4), "decryption_request")]  # (the host polls)
    assert _kind(lambda: rnd.receive(party(2), "partial_decryptions", partials)) is Kind.FAILED_PRECONDITION
    assert _kind(lambda: rnd.receive(party(7), "partial_decryptions", partials)) is Kind.PERMISSION_DENIED


def test_teacher_steps_in_order_only(setup):
    public, _, teachers, rnd = setup
    teacher = teachers[0]
    request = _request(public.key_id, [1, 2, 3, 4], [])
    assert _kind(lambda: teacher.receive(AGGREGATOR, "decryption_request", request)) is Kind.FAILED_PRECONDITION
    assert _kind(lambda: teacher.receive(party(2), "queries", dppp_pb2.DpppQueries())) is Kind.PERMISSION_DENIED
    teacher.receive(AGGREGATOR, "queries", dppp_pb2.DpppQueries())
    assert _kind(lambda: teacher.receive(AGGREGATOR, "queries", dppp_pb2.DpppQueries())) is Kind.FAILED_PRECONDITION
    teacher.abort("test")
    assert _kind(lambda: teacher.receive(AGGREGATOR, "decryption_request", request)) is Kind.ABORTED


def test_decryption_requests_are_checked_before_any_work(setup):
    public, _, teachers, _ = setup
    teacher = teachers[0]
    teacher.cast_votes()
    key_id, length = public.key_id, ct.ciphertext_length(public.paillier)

    def ask(contributors, key, values):
        request = _request(key, contributors, values)
        return lambda: teacher.receive(AGGREGATOR, "decryption_request", request)

    assert _kind(ask([1, 2, 3], key_id, [b"\x01" * length])) is Kind.FAILED_PRECONDITION  # too little noise
    for bad in (ask([1, 2, 3, 4], b"\x00" * 32, [b"\x01" * length]), ask([1, 2, 3, 4], key_id, [b"\x00" * length]),
                ask([1, 2, 3, 4], key_id, [b"\x01" * (length - 1)]), ask([1, 2, 3, 4], key_id, [b"\x01" * length] * 2),
                ask([1, 1, 2, 3], key_id, [b"\x01" * length]), ask([1, 2, 3, 9], key_id, [b"\x01" * length])):
        assert _kind(bad) is Kind.INVALID_ARGUMENT
    assert teacher.state.name == "VOTED"  # nothing changed; an honest request still gets its answer


def test_session_start_checks(threshold_key, other_keypair):
    public, shares = threshold_key
    features = np.zeros((QUERIES, 4))
    good = DpppParameters.with_minimal_noise(8.0, 1e-5, QUERIES, CLASSES, TEACHERS, 2 / 3, True, public.key_id)
    own = _resources(public, shares, 1)
    with pytest.raises(ProtocolError):
        DpppTeacherSide("s", own, dataclasses.replace(good, key_id=other_keypair.public.key_id), features, 60)
    with pytest.raises(ProtocolError):
        DpppTeacherSide("s", dataclasses.replace(own, id=6), good, features, 60)
    with pytest.raises(ProtocolError):
        DpppTeacherSide("s", own, good, features[:3], 60)
    for bad in (dict(epsilon=0.0), dict(delta=1.0), dict(classes=1), dict(honest_fraction=0.0), dict(key_id=b"x"),
                dict(epsilon=1000.0), dict(delta=1e-30), dict(honest_fraction=0.1),  # τ < 1/K
                dict(queries=50_000, classes=10), dict(epsilon=float("nan"))):
        with pytest.raises(ProtocolError):
            dataclasses.replace(good, **bad)
    opened = party_protocols(lambda identity: own)["dppp"].open
    queries = dppp_pb2.DpppQueries(parameters=good.to_proto(), features=matrix_to_proto(features), deadline_seconds=60)
    assert _kind(lambda: opened("s", party(1), CLIENT, "queries", queries)) is Kind.PERMISSION_DENIED
    assert isinstance(opened("s", party(1), AGGREGATOR, "queries", queries), DpppTeacherSide)
    for bad_queries in (dppp_pb2.DpppQueries(parameters=good.to_proto(), features=matrix_to_proto(features)),
                        dppp_pb2.DpppQueries(parameters=good.to_proto(), features=matrix_to_proto(features[:, :2]),
                                             deadline_seconds=60)):
        assert _kind(lambda: opened("s", party(1), AGGREGATOR, "queries", bad_queries)) is Kind.INVALID_ARGUMENT


def test_default_threshold():
    """⌊2ℓ/3⌋ + 1, raised to 2t > ℓ + c when one principal holds c shares; one holder alone has none (2 > ℓ)."""
    assert [default_threshold(n) for n in (1, 3, 5, 7, 8, 16)] == [2, 3, 4, 5, 6, 11]
    assert [default_threshold(7, c) for c in (1, 2, 3, 4)] == [5, 5, 6, 6]
    assert default_threshold(16, 10) == 14


def test_unpacked_layout_has_one_slot_per_ciphertext(threshold_key):
    public, _ = threshold_key
    parameters = DpppParameters.with_minimal_noise(8.0, 1e-5, QUERIES, CLASSES, TEACHERS, 2 / 3, False, public.key_id)
    layout = parameters.layout(public.n)
    assert layout.slots_per_plaintext == 1 and layout.plaintexts_needed(parameters.values) == QUERIES * CLASSES


class AbortingModel:
    """Lets an abort arrive while the teacher is voting (as from the event loop during the worker's work)."""

    def __init__(self):
        self.session = None

    def predict(self, features):
        self.session.abort("aborted by the aggregator while voting")
        return np.zeros(len(features), dtype=int)


def test_an_abort_during_voting_is_not_undone_and_nothing_is_released(setup, threshold_key):
    public, parameters, teachers, rnd = setup
    model = AbortingModel()
    teacher = model.session = DpppTeacherSide("s1", _resources(public, threshold_key[1], 1, model), parameters,
                                          teachers[0].features, 60.0)
    with pytest.raises(ProtocolError) as refused:
        teacher.cast_votes()
    assert refused.value.kind is Kind.ABORTED and teacher.state is teacher.State.ABORTED
    aggregate = [ct.to_bytes(public.paillier, public.encryptor.encrypt(1))] * rnd.collector.ciphertext_count
    request = _request(public.key_id, [1, 2, 3, 4, 5], aggregate)
    with pytest.raises(ProtocolError) as refused:  # no proven partial decryption after an abort
        teacher.partially_decrypt(request)
    assert refused.value.kind is Kind.ABORTED


def _stuffed_ballot(rnd, content: int) -> list[bytes]:
    """A malicious teacher's message: raw `content` in every slot (an honest one holds vote + Bin(N_i, ½) + bias)."""
    layout, remaining, plaintexts = rnd.layout, rnd.parameters.values, []
    while remaining:
        slots = min(layout.slots_per_plaintext, remaining)
        plaintexts.append(sum(content << (position * layout.slot_bits) for position in range(slots)))
        remaining -= slots
    return [ct.to_bytes(rnd.public_key.paillier, rnd.public_key.encryptor.encrypt(p)) for p in plaintexts]


def test_stuffed_votes_abort_the_round_instead_of_releasing_infeasible_counts(setup):
    public, parameters, teachers, rnd = setup
    tosses = parameters.calibration.tosses_per_teacher
    _vote_all(teachers, rnd, skip={5})
    # Half the slot's head-room: no carry into the next slot, yet far beyond what honest teachers can give.
    stuffed = 1 << (rnd.layout.slot_bits - 1)
    assert stuffed - rnd.layout.bias > TEACHERS + TEACHERS * tosses
    requests = rnd.receive(party(5), "votes", _votes(tosses, public.key_id, _stuffed_ballot(rnd, stuffed)))
    _decrypt(teachers, rnd, requests, holders={1, 2})  # teacher 5 did not run an honest session
    with pytest.raises(ProtocolError) as refused:
        _decrypt(teachers, rnd, requests, holders={3})
    assert refused.value.kind is Kind.ABORTED and "feasible range" in str(refused.value)
    assert rnd.state is rnd.State.ABORTED and rnd.result() is None


def test_a_request_that_needs_too_much_noise_is_refused_with_a_clear_error(threshold_key):
    """ε = 0.01 over 40 queries needs N ≈ 3·10⁷ tosses (once 297 s and 5.5 GB per teacher): the client's search
    stops at the bound, and a role given an N beyond it refuses before any accounting."""
    public, _ = threshold_key
    with pytest.raises(ValueError, match="Binomial tosses"):
        DpppParameters.with_minimal_noise(0.01, 1e-5, 40, 2, 5, 2 / 3, True, public.key_id)
    good = DpppParameters.with_minimal_noise(1.0, 1e-5, 40, 2, 5, 2 / 3, True, public.key_id)
    with pytest.raises(ProtocolError) as refused:
        dataclasses.replace(good, total_tosses=MAX_TOTAL_TOSSES + 2)
    assert refused.value.kind is Kind.INVALID_ARGUMENT and "tosses" in str(refused.value)


def test_a_round_whose_noise_sampling_would_take_minutes_is_refused_before_any_accounting(threshold_key):
    """N ≤ 2^24 alone is not a bound: at Q·C = 50 000 values a teacher would draw N_i bits for each of them
    (10^12 bits at N = 2^24, τK = 1). The product is checked, cheaply, when the parameters are built."""
    public, _ = threshold_key
    with pytest.raises(ProtocolError) as refused:
        DpppParameters(1.0, 1e-5, 25_000, 2, 1, 1.0, True, public.key_id, MAX_TOTAL_TOSSES)
    assert refused.value.kind is Kind.INVALID_ARGUMENT and "noise bits" in str(refused.value)


def test_every_role_checks_that_n_is_the_smallest_sufficient(threshold_key):
    """An aggregator (or client) that lowers N would lower the teachers' noise; one that raises it would drown
    the labels. Both are refused by the check every role runs; the searched N passes."""
    public, _ = threshold_key
    good = DpppParameters.with_minimal_noise(4.0, 1e-5, 10, 2, 5, 2 / 3, True, public.key_id)
    assert good.calibrate() == good.calibration.tosses_per_teacher
    for wrong, reason in ((good.total_tosses - 2, "do not give"), (good.total_tosses + 2, "not the smallest"),
                          (good.total_tosses + 1, "even")):
        with pytest.raises(ProtocolError, match=reason) as refused:
            dataclasses.replace(good, total_tosses=wrong).calibrate()
        assert refused.value.kind is Kind.INVALID_ARGUMENT


@pytest.mark.parametrize("tosses", [2, 82, 4488, 20000])
def test_the_windowed_pld_equals_the_full_support_one(tosses):
    """The PLD is built on mean ± 8√N only; outside it every outcome is below the truncation bound anyway."""
    from dp_accounting.pld import privacy_loss_distribution
    from scipy.stats import binom

    from mpdp.privacy import binomial

    support = np.arange(tosses + 2)
    upper, lower = binom.logpmf(support, tosses, 0.5), binom.logpmf(support - 1, tosses, 0.5)
    cut = binomial.LOG_MASS_TRUNCATION
    full = privacy_loss_distribution.from_two_probability_mass_functions(
        {int(x): float(v) for x, v in zip(support, upper) if v > cut},
        {int(x): float(v) for x, v in zip(support, lower) if v > cut},
        pessimistic_estimate=True, value_discretization_interval=binomial.DISCRETIZATION, log_mass_truncation_bound=cut)
    for epsilon in (0.1, 1.0, 5.0):
        assert binomial.query_pld(tosses, 1).get_delta_for_epsilon(epsilon) == pytest.approx(
            full.self_compose(2).get_delta_for_epsilon(epsilon), rel=1e-9, abs=1e-15)


def test_the_registry_never_evicts_a_running_session():
    from mpdp.sessions.registry import SessionRegistry

    class Fake:
        def __init__(self):
            self.finished = False

        def abort(self, reason):
            self.finished = True

    registry = SessionRegistry(keep=2)
    first, second = registry.create("a", Fake()), registry.create("b", Fake())
    for attempt in (lambda: registry.check_new("c"), lambda: registry.create("c", Fake())):
        with pytest.raises(ProtocolError) as refused:
            attempt()
        assert refused.value.kind is Kind.RESOURCE_EXHAUSTED
    assert registry.get("a") is first and registry.get("b") is second
    first.finished = True
    registry.create("c", Fake())  # the finished one makes room
    assert registry.get("b") is second
    with pytest.raises(ProtocolError):
        registry.get("a")


def test_skellam_parameters_are_checked_like_the_binomials(threshold_key):
    """The client searches μ's grid index once; every role checks it is the smallest, and a request mixing the
    two noises, or naming another, is refused."""
    public, _ = threshold_key
    good = DpppParameters.with_minimal_noise(4.0, 1e-5, 10, 2, 5, 2 / 3, True, public.key_id, "skellam")
    assert good.total_tosses == 0 and good.calibrate() == good.share_range == 2 * good.calibration.bound
    for grid, reason in ((good.skellam_grid - 1, "does not give"), (good.skellam_grid + 1, "not the smallest")):
        with pytest.raises(ProtocolError, match=reason):
            dataclasses.replace(good, skellam_grid=grid).calibrate()
    for changes in ({"total_tosses": 40}, {"noise": "gaussian"}, {"noise": ""}):
        with pytest.raises(ProtocolError) as refused:
            dataclasses.replace(good, **changes)
        assert refused.value.kind is Kind.INVALID_ARGUMENT
    assert good.calibration.report()["epsilon_all_queries"] <= 4.0 < good.calibration.report()["epsilon_rdp_bound"]


def test_a_teacher_keeps_no_plaintext_vote_or_noise_outside_test_mode(setup):
    """Test mode (`mpdp serve --test-mode`) keeps what a teacher drew for its test record; a normal teacher holds
    nothing of it once its votes are encrypted, nor after its partial decryption."""
    public, parameters, teachers, rnd = setup
    normal = [DpppTeacherSide("s1", dataclasses.replace(t.own, test_mode=False), parameters, t.features, 60.0)
              for t in teachers]
    requests = _vote_all(normal, rnd)
    _decrypt(normal, rnd, requests, holders={h.to.id for h in requests})
    assert rnd.state.name == "DONE"
    for teacher in normal:
        assert teacher.drawn is None and teacher.test_record() is None
        assert [name for name, value in vars(teacher).items() if isinstance(value, np.ndarray)] == ["features"]
    in_test_mode = teachers[0]
    in_test_mode.cast_votes()
    assert in_test_mode.drawn is not None and in_test_mode.test_record()[0] == "test_record"
