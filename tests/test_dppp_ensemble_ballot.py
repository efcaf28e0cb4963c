"""DPPP's ensemble ballot in one process (docs/data-and-metrics.md, "DPPP: each party's ensemble of teachers"):
each teacher's ballot sums the one-hot votes of T models on T disjoint parts of its rows; the round equals the
reference in every vote mode; a ballot whose query holds more than T votes is caught (by name when proven,
by the feasibility check when it leaves the feasible range unproven); T = 1 is the one-model protocol."""

import dataclasses
import random

import numpy as np
import pytest

from aggregator.registry import protocols as aggregator_protocols
from mpdp.learning import ensemble, models
from mpdp.proto.v1 import dppp_pb2
from mpdp.protocols.dppp.parameters import MAX_ENSEMBLE, DpppParameters
from mpdp.protocols.dppp.reference import noisy_histograms
from mpdp.sessions.errors import Kind, ProtocolError
from mpdp.sessions.identity import AGGREGATOR, CLIENT, party
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.vote_proofs.assurance import Assurance
from mpdp.wire.twin import InProcessNetwork
from party.dppp import DpppTeacherSide
from party.registry import protocols as party_protocols
from party.resources import PartyResources
from party.teachers import HostTeachers

QUERIES, CLASSES, TEACHERS, T = 6, 3, 5, 3
HOLDERS = list(range(1, 6))


class Thresholds:
    """A teacher's T fixed models: model t votes class (⌊2x₀⌋ + i + ⌊t/2⌋) mod C: pairs agree, others not."""

    def __init__(self, number: int):
        self.number = number

    def ensemble(self, size: int) -> list:
        return [_Threshold(self.number + t // 2) for t in range(size)]


@dataclasses.dataclass
class _Threshold:
    shift: int

    def predict(self, features):
        return np.floor(features[:, 0] * 2 + self.shift).astype(int) % CLASSES


def _resources(public, shares, number, fault=None):
    return PartyResources(number, public, shares[number - 1], Thresholds(number), np.zeros((8, 4)), np.zeros(8),
                          test_mode=True, fault=fault)


def _parameters(public, honest_fraction: float = 2 / 3, **changes) -> DpppParameters:
    return DpppParameters.with_minimal_noise(8.0, 1e-5, QUERIES, CLASSES, TEACHERS, honest_fraction, True,
                                             public.key_id, **{"ensemble": T, **changes})


def _round(public, shares, parameters, faults=None):
    faults = faults or {}
    features = np.random.default_rng(1).normal(size=(QUERIES, 4))
    own = {party(i): _resources(public, shares, i, faults.get(i)) for i in range(1, TEACHERS + 1)}
    registries = {identity: party_protocols(own.__getitem__) for identity in own}
    registries[AGGREGATOR] = aggregator_protocols(public, list(range(1, TEACHERS + 1)), HOLDERS)
    net = InProcessNetwork("ensemble", registries, random.Random(3))
    net.send(CLIENT, AGGREGATOR, "dppp", "open", dppp_pb2.DpppRoundRequest(
        parameters=parameters.to_proto(), features=matrix_to_proto(features), deadline_seconds=60))
    net.run()
    return net, features


def _released(net) -> np.ndarray:
    return np.array(net.sides[AGGREGATOR].result()[1].histograms).reshape(QUERIES, CLASSES)


@pytest.mark.parametrize("mode", ["unproven", "proven", "verifiable"])
def test_an_ensemble_round_equals_the_sum_of_each_teachers_t_votes_and_its_noise(threshold_key, mode):
    public, shares = threshold_key
    parameters = _parameters(public, assurance=Assurance.VERIFIABLE_NOISE if mode == "verifiable" else Assurance.PROVEN_VOTES if mode != "unproven" else Assurance.NONE)
    net, features = _round(public, shares, parameters)
    assert not net.refused and net.sides[AGGREGATOR].state.name == "DONE"
    teachers = [net.sides[party(i)] for i in range(1, TEACHERS + 1)]
    for number, teacher in enumerate(teachers, start=1):
        expected_votes = ensemble.ballot([m.predict(features) for m in Thresholds(number).ensemble(T)], CLASSES)
        assert np.array_equal(teacher.drawn.votes, expected_votes)
        assert np.all(teacher.drawn.votes.sum(axis=1) == T) and teacher.drawn.votes.max() <= T
    assert max(t.drawn.votes.max() for t in teachers) > 1  # some models agree: counts beyond one-hot
    expected = noisy_histograms([t.drawn.votes for t in teachers], [t.drawn.noise for t in teachers],
                                parameters.share_range)
    assert np.array_equal(_released(net), expected)
    assert np.all(expected.sum(axis=1) - TEACHERS * T == sum(t.drawn.noise for t in teachers).sum(axis=1)
                  - TEACHERS * CLASSES * (parameters.share_range // 2))
    # One message per teacher as with one model: the T votes travel in its one ballot.
    assert net.messages[("party", "aggregator", "Step/dppp/votes")] == TEACHERS


def test_a_proven_ballot_carries_t_proofs_per_query_and_more_than_t_votes_is_named(threshold_key):
    """Model 0's vote in query 0 carries a second 1 (query 0 then holds T + 1 votes, inside the feasible range)
    or 1000 (outside it): its proof fails, the sender is excluded by name, the others' round is released."""
    public, shares = threshold_key
    parameters = _parameters(public, assurance=Assurance.PROVEN_VOTES, honest_fraction=0.6)
    net, _ = _round(public, shares, parameters, {2: "vote-two-ones", 3: "vote-stuffed"})
    aggregator = net.sides[AGGREGATOR]
    assert aggregator.state.name == "DONE"
    result = aggregator.result()[1]
    assert {r.holder for r in result.rejected_votes} == {2, 3}
    assert all("vote proof failed" in r.reason for r in result.rejected_votes)
    honest = [net.sides[party(i)] for i in (1, 4, 5)]
    assert list(result.contributors) == [1, 4, 5]
    assert np.array_equal(_released(net), noisy_histograms([t.drawn.votes for t in honest],
                                                            [t.drawn.noise for t in honest], parameters.share_range))
    ballot = DpppTeacherSide("s2", _resources(public, shares, 1), parameters, np.zeros((QUERIES, 4)), 60.0).cast_votes()
    assert len(ballot.proven.proofs) == len(ballot.proven.ciphertexts.values) == QUERIES * T
    assert all(len(proof.commitments) == CLASSES for proof in ballot.proven.proofs)


def test_unproven_a_ballot_beyond_the_feasible_range_aborts_and_one_vote_more_passes(threshold_key):
    """Without proofs the aggregator sees only the decrypted sum: a slot stuffed beyond K·(T + N_i) leaves the
    feasible range [0, K′T + Σ N_i] and the round aborts releasing nothing; one vote more (T + 1 in a query)
    stays inside it and is counted, as docs/data-and-metrics.md says."""
    public, shares = threshold_key
    parameters = _parameters(public)
    net, _ = _round(public, shares, parameters, {2: "ballot-stuffed"})
    aggregator = net.sides[AGGREGATOR]
    assert aggregator.state.name == "ABORTED" and aggregator.result() is None
    net, _ = _round(public, shares, parameters, {2: "vote-two-ones"})
    teachers = [net.sides[party(i)] for i in range(1, TEACHERS + 1)]
    skew = _released(net) - noisy_histograms([t.drawn.votes for t in teachers], [t.drawn.noise for t in teachers],
                                             parameters.share_range)
    assert skew.sum() == 1 and skew[0].sum() == 1


def test_one_model_per_teacher_is_the_protocol_without_the_field(threshold_key):
    """T = 1: the parameters' bytes (hence every signature's slot) and the layout are those of a session that
    never names T; a proto without the field reads as T = 1."""
    public, _ = threshold_key
    one = _parameters(public, ensemble=1)
    message = one.to_proto()
    assert message.ensemble == 0
    without = dppp_pb2.DpppParameters()
    without.CopyFrom(message)
    without.ClearField("ensemble")
    assert message.SerializeToString(deterministic=True) == without.SerializeToString(deterministic=True)
    assert DpppParameters.from_proto(without) == one
    assert one.layout(public.n).slot_bits == _parameters(public, ensemble=1, assurance=Assurance.NONE).layout(public.n).slot_bits
    value_bits = (one.share_range + 1).bit_length() + 1  # the one-model width: one vote and one share per summand
    assert one.layout(public.n).value_bits == value_bits
    wide = _parameters(public, ensemble=MAX_ENSEMBLE)
    assert wide.layout(public.n).value_bits == (wide.share_range + MAX_ENSEMBLE).bit_length() + 1


def test_the_ensemble_size_is_checked_by_every_role(threshold_key):
    public, shares = threshold_key
    for size in (0, MAX_ENSEMBLE + 1):
        with pytest.raises(ProtocolError) as refused:
            _parameters(public, ensemble=size)
        assert refused.value.kind is Kind.INVALID_ARGUMENT
    # A teacher with fewer rows than T refuses the session before any training (8 rows here).
    own = _resources(public, shares, 1)
    with pytest.raises(ProtocolError, match="at least 9 rows"):
        DpppTeacherSide("s", own, _parameters(public, ensemble=9), np.zeros((QUERIES, 4)), 60.0)


def test_the_split_is_fixed_and_a_replaced_record_moves_one_model():
    """The parts are disjoint, cover the rows, and are the same on every call; replacing one record in place
    changes one of the T models and leaves the other T − 1 exactly as they were."""
    rows, size = 120, 4
    first, again = ensemble.parts(rows, size), ensemble.parts(rows, size)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert sorted(np.concatenate(first).tolist()) == list(range(rows))
    assert {len(part) for part in first} == {rows // size}
    rng = np.random.default_rng(0)
    features = rng.uniform(-0.5, 0.5, size=(rows, 3))  # in the unit ball, as the exact model takes them
    labels = (features[:, 0] > 0).astype(int)
    replaced = features.copy(), labels.copy()
    replaced[0][7], replaced[1][7] = [0.5, -0.5, 0.5], 1 - labels[7]
    before = ensemble.train("logistic-exact", features, labels, 2, size)
    after = ensemble.train("logistic-exact", *replaced, 2, size)
    changed = [t for t in range(size) if not np.array_equal(before[t]._weights, after[t]._weights)]
    holder = next(t for t, part in enumerate(first) if 7 in part)
    assert changed == [holder]
    with pytest.raises(ValueError):
        ensemble.parts(3, 4)


def test_a_host_trains_each_ensemble_once_and_keeps_it():
    host = HostTeachers()
    rng = np.random.default_rng(2)
    features = rng.uniform(-0.5, 0.5, size=(60, 3))
    labels = (features[:, 1] > 0).astype(int)
    teacher = host.add(1, "logistic-exact", features, labels, 2)
    models_4 = teacher.ensemble(4)
    assert len(models_4) == 4 and teacher.ensemble(4) is models_4  # cached: the same objects
    assert teacher.ensemble(1) == [host.model(1)]
    queries = rng.uniform(-0.5, 0.5, size=(10, 3))
    expected = [models.train(*job).predict(queries) for job in ensemble.jobs("logistic-exact", features, labels, 2, 4)]
    assert all(np.array_equal(m.predict(queries), e) for m, e in zip(models_4, expected))
    with pytest.raises(ProtocolError, match="at least 61 rows"):
        teacher.ensemble(61)


def test_one_model_per_teacher_sends_the_closed_form_messages_and_an_ensemble_as_many_ciphertexts(threshold_key):
    """T = 1 over the twin network: the closed-form message counts of a one-model round, one packed ballot of
    ⌈Q·C / slots⌉ ciphertexts per teacher; T = 8 sends the same messages with as many ciphertexts each."""
    public, shares = threshold_key
    sizes: dict[int, list[int]] = {}
    for size in (1, 8):
        parameters = _parameters(public, ensemble=size)
        net, _ = _round(public, shares, parameters)
        assert net.sides[AGGREGATOR].state.name == "DONE"
        k, t = TEACHERS, public.threshold
        assert net.messages == {("client", "aggregator", "Step/dppp/open"): 1,
                                ("aggregator", "party", "Step/dppp/queries"): k,
                                ("party", "aggregator", "Step/dppp/votes"): k,
                                ("aggregator", "party", "Step/dppp/decryption_request"): t,
                                ("party", "aggregator", "Step/dppp/partial_decryptions"): t,
                                ("aggregator", "party", "Step/dppp/stand_down"): len(HOLDERS) - t}
        request = net.sides[AGGREGATOR].request
        sizes[size] = [len(c.ciphertexts.values) for c in request.contributions]
        assert np.all(net.sides[party(1)].drawn.votes.sum(axis=1) == size)
    per_teacher = _parameters(public, ensemble=1).layout(public.n).plaintexts_needed(QUERIES * CLASSES)
    assert sizes[1] == sizes[8] == [per_teacher] * TEACHERS
