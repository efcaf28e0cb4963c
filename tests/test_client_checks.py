"""The DPPP client's own check of the aggregator's result (docs/client-checks.md), in process: one honest round
(teacher 3 absent, so a count can be inflated) is checked as released, then altered as a hostile aggregator
would alter it; every alteration fails the check with a line naming the aggregator."""

import dataclasses

import numpy as np
import pytest

from aggregator.dppp import DpppAggregatorSide
from mpdp.proto.v1 import dppp_pb2, du_pb2, hamm_pb2, threshold_sum_pb2
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.protocols.dppp.release import check_round
from mpdp.sessions.errors import Kind, ProtocolError
from mpdp.sessions.identity import CLIENT, party
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.vote_proofs.assurance import Assurance
from party.dppp import DpppTeacherSide
from tests.test_dppp_sessions import CLASSES, HOLDERS, QUERIES, TEACHERS, _resources

SESSION = "checked"


@pytest.fixture(scope="module")
def released(threshold_key):
    """(parameters, public key, the aggregator's result) of an honest round without teacher 3."""
    return _round(threshold_key, False, {}, absent=3)[:3]


@pytest.fixture(scope="module")
def proven(threshold_key):
    """A proven-votes round in which teacher 2 votes twice in a query (its proof fails) and teacher 3 is absent."""
    return _round(threshold_key, True, {2: "vote-two-ones"}, absent=3)


def _round(threshold_key, proven: bool, faults: dict[int, str], absent: int | None = None, keys=None):
    """(parameters, public key, the aggregator's result, every teacher's votes message) of a round in process;
    `keys(identity)`: each role's signing keys (none: unsigned, as in a plaintext deployment)."""
    public, shares = threshold_key
    honest_fraction = 1 / 2 if proven else 2 / 3  # proven: two of five out, three must be enough
    parameters = DpppParameters.with_minimal_noise(8.0, 1e-5, QUERIES, CLASSES, TEACHERS, honest_fraction, True,
                                                   public.key_id, assurance=Assurance.PROVEN_VOTES if proven else Assurance.NONE)
    parameters.calibrate()
    features = np.random.default_rng(5).normal(size=(QUERIES, 4))
    teachers = []
    for i in range(1, TEACHERS + 1):
        own = dataclasses.replace(_resources(public, shares, i), fault=faults.get(i),
                                  contribution_keys=keys(party(i)) if keys is not None else None)
        teachers.append(own.side(DpppTeacherSide)(SESSION, own, parameters, features, 60.0))
    rnd = DpppAggregatorSide(SESSION, parameters, matrix_to_proto(features), 60.0, public,
                             list(range(1, TEACHERS + 1)), HOLDERS, keys=keys(CLIENT) if keys is not None else None)
    rnd.receive(CLIENT, "open", dppp_pb2.DpppRoundRequest())
    votes = {teacher.own.id: teacher.cast_votes() for teacher in teachers}
    requests = []
    for teacher, message in votes.items():
        if teacher != absent:
            requests = rnd.receive(party(teacher), "votes", message)
    if absent is not None:
        requests = rnd.on_undeliverable(party(absent), "queries", "unreachable")
    for outbound in requests:
        holder = outbound.to.id
        rnd.receive(party(holder), "partial_decryptions", teachers[holder - 1].partially_decrypt(outbound.body))
    assert rnd.state.name == "DONE"
    return parameters, public, rnd.result()[1], votes


def _check(released, result=None):
    parameters, public, honest = released
    return check_round(parameters, public, SESSION, None, HOLDERS, honest if result is None else result)


def _copy(released) -> dppp_pb2.DpppRoundResult:
    result = dppp_pb2.DpppRoundResult()
    result.CopyFrom(released[2])
    return result


def _lie(released, result) -> str:
    with pytest.raises(ProtocolError) as raised:
        _check(released, result)
    assert raised.value.kind is Kind.ABORTED
    message = str(raised.value)
    assert message.startswith("the aggregator lied") and message.endswith("nothing is released")
    return message


def test_an_honest_result_is_what_the_client_computes(released):
    checked = _check(released)
    honest = released[2]
    assert checked.contributors == [1, 2, 4, 5] == list(honest.contributors)
    assert checked.histograms.ravel().tolist() == list(honest.histograms)
    assert checked.labels.tolist() == list(honest.labels) and checked.decryptors == list(honest.decryptors)
    assert checked.rejected_votes == {} and checked.rejected_shares == {}


def test_forged_labels_are_detected(released):
    result = _copy(released)
    result.labels[0] = (result.labels[0] + 1) % CLASSES
    assert "labels" in _lie(released, result)
    result = _copy(released)  # histograms forged to agree with the forged labels
    histograms = np.array(result.histograms).reshape(QUERIES, CLASSES)
    histograms[0, (result.labels[0] + 1) % CLASSES] += 1000
    del result.histograms[:]
    result.histograms.extend(histograms.ravel().tolist())
    result.labels[0] = (result.labels[0] + 1) % CLASSES
    assert "histograms" in _lie(released, result)


def test_an_inflated_contributor_count_is_detected(released):
    result = _copy(released)
    result.contributors[:] = [1, 2, 3, 4, 5]
    assert "contributors" in _lie(released, result)
    result = _copy(released)  # teacher 3 given teacher 2's votes: no longer the product the holders decrypted
    forged = threshold_sum_pb2.Contribution()
    forged.CopyFrom(result.evidence.request.contributions[1])
    forged.sender = 3
    result.evidence.request.contributions.insert(2, forged)
    result.contributors[:] = [1, 2, 3, 4, 5]
    _lie(released, result)


def test_a_deflated_contributor_count_is_detected(released):
    result = _copy(released)
    result.contributors[:] = [1, 2, 4]
    assert "contributors" in _lie(released, result)
    result = _copy(released)  # the evidence made to agree: then the holders' proofs are over another C
    del result.evidence.request.contributions[3]
    result.contributors[:] = [1, 2, 4]
    _lie(released, result)


def test_an_altered_contribution_or_a_swapped_proof_is_detected(released):
    result = _copy(released)
    contributions = result.evidence.request.contributions
    contributions[0].ciphertexts.values[0] = contributions[1].ciphertexts.values[0]
    _lie(released, result)
    result = _copy(released)
    answers = result.evidence.answers
    first, second = threshold_sum_pb2.PartialDecryptions(), threshold_sum_pb2.PartialDecryptions()
    first.CopyFrom(answers[0].partials)
    second.CopyFrom(answers[1].partials)
    answers[0].partials.challenge, answers[1].partials.challenge = second.challenge, first.challenge
    assert "partial decryptions" in _lie(released, result)


def test_false_blame_is_detected(released):
    result = _copy(released)  # unproven votes have no check a teacher could fail
    result.rejected_votes.add(holder=3, reason="vote proof failed: branch 0")
    assert "unproven votes have none" in _lie(released, result)
    result = _copy(released)
    result.rejected_votes.add(holder=2, reason="vote proof failed: branch 0")
    assert "counted its contribution" in _lie(released, result)
    result = _copy(released)  # a key holder named as failing whose partial decryptions verify
    result.rejected.add(holder=result.decryptors[0], reason="proof failed")
    assert "partial decryptions failed" in _lie(released, result)


def test_a_result_without_evidence_is_refused(released):
    result = _copy(released)
    result.ClearField("evidence")
    assert "no evidence" in _lie(released, result)


def test_proven_votes_blame_is_repeated_by_the_client(proven):
    parameters, public, result, votes = proven
    checked = _check(proven[:3])
    assert list(checked.rejected_votes) == [2] and "vote proof failed" in checked.rejected_votes[2]
    assert checked.contributors == [1, 4, 5]
    lying = dppp_pb2.DpppRoundResult()  # teacher 3's genuine votes, which the aggregator dropped, named as failing
    lying.CopyFrom(result)
    lying.rejected_votes.add(holder=3, reason="vote proof failed: branch 1")
    lying.blamed.add(teacher=3, votes=votes[3])
    assert "which verify" in _lie(proven[:3], lying)
    lying = dppp_pb2.DpppRoundResult()  # a blame without the votes it rests on
    lying.CopyFrom(result)
    del lying.blamed[:]
    assert "without its votes" in _lie(proven[:3], lying)


# ------------------------------------------------------------------------------------- Hamm: Charlie releases

def _hamm_with_aggregate(threshold_key, alter):
    """A Hamm session in the twin whose aggregate, on its way to Charlie, is altered by `alter`; Charlie's side."""
    from mpdp.proto.v1 import role_pb2
    from mpdp.sessions.identity import AGGREGATOR, CURATOR
    from tests.test_hamm_sessions import _aux, _network, _parameters

    public, _ = threshold_key
    net, _ = _network(threshold_key, 5, 2, _aux())
    net.send(CLIENT, CURATOR, "hamm", "open", hamm_pb2.HammOpen(parameters=_parameters(public, 5, 2).to_proto(),
                                                                deadline_seconds=30, noise_seed=11))
    queue = net._queues[(AGGREGATOR, CURATOR)]
    net.run(stop_when=lambda n: any(role_pb2.Envelope.FromString(e).hamm.HasField("aggregate") for _, e in queue))
    for index, (call_id, raw) in enumerate(queue):
        envelope = role_pb2.Envelope.FromString(raw)
        if envelope.hamm.HasField("aggregate"):
            alter(envelope.hamm.aggregate)
            queue[index] = (call_id, envelope.SerializeToString())
    try:
        net.run()
    except ProtocolError as error:  # Charlie's last step failed outside a delivery: the twin passes it on
        assert error.kind is Kind.ABORTED
    return net.sides[CURATOR]


def test_charlie_refuses_blame_where_votes_carry_no_proof(threshold_key):
    charlie = _hamm_with_aggregate(threshold_key, lambda aggregate: aggregate.rejected_votes.add(
        holder=5, reason="vote proof failed: branch 0"))
    assert charlie.state.name == "ABORTED" and charlie.result() is None
    assert charlie.abort_reason.startswith("the aggregator lied") and "unproven votes have none" in charlie.abort_reason


def test_charlie_refuses_a_contributor_it_did_not_get_votes_from(threshold_key):
    def inflate(aggregate):  # party 5's votes dropped from what Charlie is sent: another C than the holders'
        del aggregate.request.contributions[4]
    charlie = _hamm_with_aggregate(threshold_key, inflate)
    assert charlie.state.name == "ABORTED" and charlie.result() is None


# ------------------------------------------------------------------------------ Du: the server combines, the client checks

@pytest.fixture(scope="module")
def du_released(threshold_key):
    """(parameters, public key, result) of a one-round secure-aggregation Du run in the twin."""
    from mpdp.protocols.du.parameters import DuParameters
    from tests.test_du_sessions import _network, _run

    parts = [(np.random.default_rng(i).normal(size=(20, 4)) / 4, np.arange(20) % 2) for i in range(5)]
    public, _ = threshold_key
    parameters = DuParameters(method="ofaa", epsilon=1.0, delta=1e-5, rounds=1, tolerance=0.0, local_epochs=1,
                              learning_rate=1.0, regularization=0.01, parties=5, dimension=4, bound=50.0,
                              secure_aggregation=True, honest_fraction=2 / 3, key_id=public.key_id)
    return parameters, public, _run(_network(threshold_key, parts), parameters)


def _du_check(du_released, result=None):
    from mpdp.protocols.du.release import check_result

    parameters, public, honest = du_released
    return check_result(parameters, public, "du", None, HOLDERS, honest if result is None else result)


def _du_lie(du_released, alter) -> str:
    result = du_pb2.DuResult()
    result.CopyFrom(du_released[2])
    alter(result)
    with pytest.raises(ProtocolError) as raised:
        _du_check(du_released, result)
    assert str(raised.value).startswith("the server (aggregator) lied")
    return str(raised.value)


def test_the_du_client_recomputes_every_round(du_released):
    checked = _du_check(du_released)
    assert checked["participants"] == {0: [1, 2, 3, 4, 5]} and checked["rejected_shares"] == {}


def test_du_lies_are_detected(du_released):
    def theta(result):
        result.theta[0] += 2**-20
    assert "released θ" in _du_lie(du_released, theta)

    def inflate(result):  # a round's participant added
        del result.history[0].participants[4]
    assert "participants" in _du_lie(du_released, inflate)

    def dropped(result):  # a round's upload dropped from its evidence: the holders decrypted another C
        del result.evidence[0].evidence.request.contributions[2]
    _du_lie(du_released, dropped)

    def no_evidence(result):
        del result.evidence[0]
    assert "one sum's evidence per round" in _du_lie(du_released, no_evidence)


@pytest.fixture(scope="module")
def signed_proven(threshold_key, tmp_path_factory):
    """The proven round with every teacher signing (certificates of a CA of its own), and the client's keys."""
    from launcher.deployment import certs
    from launcher.deployment.serve import speaks_for
    from mpdp.cryptocore.keys.contribution_signature import ContributionSigner, ContributionVerifier
    from mpdp.threshold_sum.binding import ContributionKeys

    directory = tmp_path_factory.mktemp("certs")
    certs.issue(directory, [party(i) for i in range(1, TEACHERS + 1)])
    verifier = ContributionVerifier.from_file(directory / certs.CA_FILE)

    def keys(identity):
        if identity.role != "party":
            return ContributionKeys(verifier, speaks_for)
        certificate, key = certs.certificate_files(directory, identity)
        return ContributionKeys(verifier, speaks_for, ContributionSigner.from_files(key, certificate))

    return (*_round(threshold_key, True, {2: "vote-two-ones"}, absent=3, keys=keys), keys(CLIENT))


def test_a_blame_rests_on_the_teachers_own_signed_proofs(signed_proven):
    parameters, public, result, votes, keys = signed_proven
    check = lambda r: check_round(parameters, public, SESSION, keys, HOLDERS, r)  # noqa: E731
    checked = check(result)
    assert list(checked.rejected_votes) == [2] and "the teacher signed" in checked.rejected_votes[2]
    framed = dppp_pb2.DpppRoundResult()  # teacher 3's genuine votes with one proof byte changed, named as failing
    framed.CopyFrom(result)
    forged = dppp_pb2.DpppVotes()
    forged.CopyFrom(votes[3])
    proof = bytearray(forged.proven.proofs[0].challenges[0])
    proof[-1] ^= 1
    forged.proven.proofs[0].challenges[0] = bytes(proof)
    framed.rejected_votes.add(holder=3, reason="vote proof failed: branch 0")
    framed.blamed.add(teacher=3, votes=forged)
    checked = check(framed)  # the teacher did not sign those proofs: no one is blamed, the claim is the aggregator's
    assert 3 not in checked.rejected_votes and "the aggregator's word" in checked.unverified_blame[3]
    framed.blamed[-1].votes.CopyFrom(votes[3])  # its genuine, signed votes: the blame is a lie
    with pytest.raises(ProtocolError, match="which verify"):
        check(framed)
