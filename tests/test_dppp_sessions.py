"""The DPPP state machines in one process, checked against the reference computation."""

import dataclasses

import numpy as np
import pytest

from aggregator.dppp_round import DpppRound
from cryptocore import ciphertext as ct
from cryptocore.errors import CryptoError
from dppp.parameters import DpppParameters, default_threshold
from dppp.reference import noisy_histograms
from party.dppp_session import TeacherSession
from sessions.errors import Kind, ProtocolError, from_crypto
from sessions.identity import party

QUERIES, CLASSES, TEACHERS = 7, 3, 5


class SignClassifier:
    """A fixed local model: class by the sign pattern of two features."""

    def __init__(self, offset):
        self.offset = offset

    def predict(self, features):
        return ((features[:, 0] > 0).astype(int) + self.offset) % CLASSES


@pytest.fixture
def setup(threshold_key):
    public, shares = threshold_key
    parameters = DpppParameters(8.0, 1e-5, QUERIES, CLASSES, TEACHERS, 2 / 3, True, public.key_id)
    features = np.random.default_rng(0).normal(size=(QUERIES, 4))
    teachers = [TeacherSession("s1", i, parameters, features, public, shares[i - 1]) for i in range(1, TEACHERS + 1)]
    rnd = DpppRound("s1", parameters, public, list(range(1, TEACHERS + 1)), list(range(1, 6)))
    return public, parameters, teachers, rnd


def _vote_all(teachers, rnd, skip=()):
    ballots = {}
    for teacher in teachers:
        if teacher.teacher in skip:
            continue
        tosses, ciphertexts = teacher.cast_votes(SignClassifier(teacher.teacher))
        ballots[teacher.teacher] = (tosses, ciphertexts)
        rnd.accept_votes(party(teacher.teacher), teacher.teacher, tosses, teacher.public_key.key_id, ciphertexts)
    return ballots


def _decrypt_all(teachers, rnd, contributors, holders):
    for teacher in teachers:
        if teacher.teacher not in holders:
            continue
        ciphertexts = teacher.begin_decryption(rnd.public_key.key_id, [ct.to_bytes(rnd.public_key.paillier, c) for c in rnd.aggregate], contributors)
        partials = teacher.partial_decrypt(ciphertexts)
        rnd.accept_partials(party(teacher.teacher), teacher.teacher, partials)
        rnd.verify_partials(teacher.teacher, partials)


def test_round_equals_reference(setup):
    public, parameters, teachers, rnd = setup
    _vote_all(teachers, rnd)
    _, contributors = rnd.close_collection()
    _decrypt_all(teachers, rnd, contributors, holders={1, 2, 4})
    result = rnd.finish()
    expected = noisy_histograms([t.test_record.votes for t in teachers], [t.test_record.noise for t in teachers],
                                parameters.calibration.tosses_per_teacher)
    assert np.array_equal(result.histograms, expected)
    assert result.decryptors == [1, 2, 4]


def test_one_teacher_missing_is_tolerated(setup):
    _, parameters, teachers, rnd = setup
    _vote_all(teachers, rnd, skip={3})
    rnd.mark_teacher_absent(3, "unreachable")
    assert rnd.all_votes_in
    _, contributors = rnd.close_collection()
    assert contributors == [1, 2, 4, 5]
    _decrypt_all(teachers, rnd, contributors, holders={1, 2, 5})
    present = [t for t in teachers if t.teacher != 3]
    expected = noisy_histograms([t.test_record.votes for t in present], [t.test_record.noise for t in present],
                                parameters.calibration.tosses_per_teacher)
    assert np.array_equal(rnd.finish().histograms, expected)


def test_two_missing_teachers_abort(setup):
    _, _, teachers, rnd = setup
    _vote_all(teachers, rnd, skip={4, 5})
    with pytest.raises(ProtocolError) as raised:
        rnd.close_collection()
    assert raised.value.kind is Kind.ABORTED and rnd.finished and not rnd.votes


def _kind(action) -> Kind:
    """The error kind the servicer would report (crypto rejections map as in wire.status)."""
    with pytest.raises((ProtocolError, CryptoError)) as raised:
        action()
    error = raised.value
    return (from_crypto(error) if isinstance(error, CryptoError) else error).kind


def test_bad_votes_are_refused_and_change_nothing(setup, other_keypair):
    public, parameters, teachers, rnd = setup
    tosses, ciphertexts = teachers[0].cast_votes(SignClassifier(0))
    key_id = public.key_id
    attempts = {
        Kind.PERMISSION_DENIED: [lambda: rnd.accept_votes(party(2), 1, tosses, key_id, ciphertexts),
                                 lambda: rnd.accept_votes(party(9), 9, tosses, key_id, ciphertexts),
                                 lambda: rnd.accept_votes(None, 1, tosses, key_id, ciphertexts)],
        Kind.INVALID_ARGUMENT: [lambda: rnd.accept_votes(party(1), 1, tosses - 2, key_id, ciphertexts),
                                lambda: rnd.accept_votes(party(1), 1, tosses, other_keypair.public.key_id, ciphertexts),
                                lambda: rnd.accept_votes(party(1), 1, tosses, key_id, ciphertexts * 2),
                                lambda: rnd.accept_votes(party(1), 1, tosses, key_id, [b"\x00" * 256]),
                                lambda: rnd.accept_votes(party(1), 1, tosses, key_id, [ciphertexts[0][:-1]])],
        Kind.FAILED_PRECONDITION: [lambda: rnd.accept_partials(party(1), 1, []), rnd.finish],
    }
    for kind, actions in attempts.items():
        for action in actions:
            assert _kind(action) is kind
            assert rnd.votes == {} and rnd.state.name == "COLLECTING"
    rnd.accept_votes(party(1), 1, tosses, key_id, ciphertexts)
    assert _kind(lambda: rnd.accept_votes(party(1), 1, tosses, key_id, ciphertexts)) is Kind.FAILED_PRECONDITION
    assert list(rnd.votes) == [1]


def test_bad_share_is_named_and_the_holder_cannot_retry(setup):
    _, _, teachers, rnd = setup
    _vote_all(teachers, rnd)
    _, contributors = rnd.close_collection()
    teacher = teachers[1]
    partials = teacher.partial_decrypt(teacher.begin_decryption(
        rnd.public_key.key_id, [ct.to_bytes(rnd.public_key.paillier, c) for c in rnd.aggregate], contributors))
    forged = [dataclasses.replace(p, response=p.response + 1) for p in partials]
    rnd.accept_partials(party(2), 2, forged)
    with pytest.raises(Exception, match="holder 2"):
        rnd.verify_partials(2, forged)
    assert 2 in rnd.rejected and 2 not in rnd.partials
    assert _kind(lambda: rnd.accept_partials(party(2), 2, partials)) is Kind.FAILED_PRECONDITION
    assert _kind(lambda: rnd.accept_partials(party(1), 3, partials)) is Kind.PERMISSION_DENIED


def test_teacher_steps_in_order_only(setup):
    public, _, teachers, rnd = setup
    teacher = teachers[0]
    assert _kind(lambda: teacher.begin_decryption(public.key_id, [], [1, 2, 3, 4])) is Kind.FAILED_PRECONDITION
    teacher.cast_votes(SignClassifier(0))
    assert _kind(lambda: teacher.cast_votes(SignClassifier(0))) is Kind.FAILED_PRECONDITION
    assert _kind(lambda: teacher.partial_decrypt([])) is Kind.FAILED_PRECONDITION
    teacher.abort("test")
    assert _kind(lambda: teacher.begin_decryption(public.key_id, [], [1, 2, 3, 4])) is Kind.ABORTED


def test_session_start_checks(threshold_key, other_keypair):
    public, shares = threshold_key
    features = np.zeros((QUERIES, 4))
    good = DpppParameters(8.0, 1e-5, QUERIES, CLASSES, TEACHERS, 2 / 3, True, public.key_id)
    with pytest.raises(ProtocolError):
        TeacherSession("s", 1, dataclasses.replace(good, key_id=other_keypair.public.key_id), features, public, shares[0])
    with pytest.raises(ProtocolError):
        TeacherSession("s", 6, good, features, public, shares[0])
    with pytest.raises(ProtocolError):
        TeacherSession("s", 1, good, features[:3], public, shares[0])
    for bad in (dict(epsilon=0.0), dict(delta=1.0), dict(classes=1), dict(honest_fraction=0.0), dict(key_id=b"x"),
                dict(epsilon=1000.0), dict(delta=1e-30), dict(honest_fraction=0.1),  # τ < 1/K
                dict(queries=50_000, classes=10), dict(epsilon=float("nan"))):
        with pytest.raises(ProtocolError):
            dataclasses.replace(good, **bad)


def test_default_threshold():
    assert [default_threshold(n) for n in (1, 3, 5, 8, 16)] == [1, 3, 4, 6, 11]


def test_unpacked_layout_has_one_slot_per_ciphertext(threshold_key):
    public, _ = threshold_key
    parameters = DpppParameters(8.0, 1e-5, QUERIES, CLASSES, TEACHERS, 2 / 3, False, public.key_id)
    layout = parameters.layout(public.n)
    assert layout.slots_per_plaintext == 1 and layout.plaintexts_needed(parameters.values) == QUERIES * CLASSES


class AbortingModel:
    """Lets an abort arrive while the teacher is voting (as from the event loop during the worker's work)."""

    def __init__(self, session):
        self.session = session

    def predict(self, features):
        self.session.abort("aborted by the aggregator while voting")
        return np.zeros(len(features), dtype=int)


def test_an_abort_during_voting_is_not_undone_and_nothing_is_released(setup):
    public, parameters, teachers, rnd = setup
    teacher = teachers[0]
    with pytest.raises(ProtocolError) as refused:
        teacher.cast_votes(AbortingModel(teacher))
    assert refused.value.kind is Kind.ABORTED and teacher.state is teacher.State.ABORTED
    aggregate = [ct.to_bytes(public.paillier, public.encryptor.encrypt(1))] * rnd.ciphertext_count
    with pytest.raises(ProtocolError) as refused:  # no proven partial decryption after an abort
        teacher.begin_decryption(public.key_id, aggregate, [1, 2, 3, 4, 5])
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
    rnd.accept_votes(party(5), 5, tosses, public.key_id, _stuffed_ballot(rnd, stuffed))
    aggregate, contributors = rnd.close_collection()
    _decrypt_all(teachers, rnd, contributors, holders=range(1, 5))  # teacher 5 did not run an honest session
    with pytest.raises(ProtocolError) as refused:
        rnd.finish()
    assert refused.value.kind is Kind.ABORTED and "feasible range" in str(refused.value)
    assert rnd.state is rnd.State.ABORTED


def test_a_request_that_needs_too_much_noise_is_refused_with_a_clear_error(threshold_key):
    """ε = 0.01 over 40 queries needs N ≈ 3·10⁷ tosses (once 297 s and 5.5 GB per teacher): refused, cheaply."""
    public, _ = threshold_key
    parameters = DpppParameters(0.01, 1e-5, 40, 2, 5, 2 / 3, True, public.key_id)
    with pytest.raises(ProtocolError) as refused:
        parameters.calibrate()
    assert refused.value.kind is Kind.INVALID_ARGUMENT and "tosses" in str(refused.value)


@pytest.mark.parametrize("tosses", [2, 82, 4488, 20000])
def test_the_windowed_pld_equals_the_full_support_one(tosses):
    """The PLD is built on mean ± 8√N only; outside it every outcome is below the truncation bound anyway."""
    from dp_accounting.pld import privacy_loss_distribution
    from scipy.stats import binom

    from privacy import binomial

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
    from sessions.registry import SessionRegistry

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
