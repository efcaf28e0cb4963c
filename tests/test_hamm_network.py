"""Hamm over real processes (1024-bit keys, loopback, mutual TLS), checked against the reference."""

import asyncio
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import grpc
import numpy as np
import pytest

from launcher.protocols.hamm import commands as hamm_commands
from launcher.protocols.hamm.client import evaluator_view, run_hamm_session, session_parameters
from launcher.registry import PROTOCOLS
from mpdp.cryptocore.keys.contribution_signature import ContributionSigner
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier import keyfiles
from mpdp.learning import datasets, models
from mpdp.proto.v1 import common_pb2, hamm_pb2, threshold_sum_pb2
from mpdp.proto.v1.role_pb2_grpc import RoleStub
from mpdp.protocols.hamm import reference
from mpdp.protocols.hamm.charlie import eta_source
from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, party
from mpdp.threshold_sum.binding import SumSlot
from tests.deployment import TEST_MODEL, envelope
from tests.dppp_faults import FAULTS_K5, TAMPERER
from tests.test_dppp_network import _status, observed_counts
from tests.waiting import eventually


def closed_form(parties: int, holders: int, voters: int | None = None, answering: int | None = None) -> Counter:
    """Messages per (from, to, rpc) in one session: X_aux down, votes up, the decryption to Charlie."""
    return Counter({
        ("client", "curator", "AwaitResult/hamm/open"): 1,
        ("curator", "aggregator", "Step/hamm/queries"): 1,
        ("aggregator", "party", "Step/hamm/queries"): parties,
        ("party", "aggregator", "Step/hamm/votes"): parties if voters is None else voters,
        ("aggregator", "party", "Step/hamm/decryption_request"): holders,
        ("aggregator", "curator", "Step/hamm/aggregate"): 1,
        ("party", "curator", "Step/hamm/partial_decryptions"): holders if answering is None else answering,
    })


def run(d, method="soft", epsilon=2.0, noisy=False, seed=9, **options):
    parameters = session_parameters(d.topology, d.client_data, method, epsilon, 1e-5, 0.01, noisy, **options)
    return parameters, asyncio.run(run_hamm_session(d.topology, d.client_data, parameters, deadline_s=60.0,
                                                    noise_seed=seed))


def local_models(d) -> list:
    """Every party's local classifier, trained as its process trained it (the evaluator can: it split the data)."""
    return [models.train(TEST_MODEL, *datasets.load_part(entry.data)[:2]) for entry in d.topology.parties]


def weights(report) -> np.ndarray:
    return np.array(report["result"]["weights"]).ravel()


@pytest.fixture
def five(pool):
    """K = 5 (t = 4 of 5 holders) with party 2 tampering with its partial decryptions."""
    return pool.get(5, FAULTS_K5)


def test_the_release_equals_the_reference_and_a_tampered_share_is_rejected(five):
    parameters, report = run(five, seed=9)
    aux = five.client_data["public_features"]
    counts, outcome = reference.session(parameters, aux, local_models(five), eta_source(9))
    assert np.array_equal(weights(report), outcome.released.ravel())
    charlie = five.call(CURATOR, RoleStub, "GetTestRecord", envelope(report["session_id"], CURATOR), CLIENT)
    assert np.array_equal(np.array(charlie.hamm.test_record.counts).reshape(counts.shape), counts)
    result = report["result"]
    assert result["voters"] == 5 and result["decryptors"] == [1, 3, 4, 5]
    assert str(TAMPERER) in result["rejected_shares"]
    assert observed_counts(report) == closed_form(5, 5)
    # `mpdp verify` repeats the signatures and C of the votes the report's transcript carries, under the CA.
    lines = PROTOCOLS["hamm"].verify(report, None, None)
    assert any("voters signed by their senders under the CA" in line for line in lines)
    # Charlie is sent the opening, one aggregate of ciphertexts and proven shares: never a party's votes.
    to_charlie = {row["rpc"] for row in report["traffic_detail"] if row["to"] == "curator/0"}
    assert to_charlie == {"AwaitResult/hamm/open", "Step/hamm/aggregate", "Step/hamm/partial_decryptions"}
    to_aggregator = {(row["from"].split("/")[0], row["rpc"]) for row in report["traffic_detail"]
                     if row["to"] == "aggregator/0"}
    assert to_aggregator == {("curator", "Step/hamm/queries"), ("party", "Step/hamm/votes")}
    assert report["privacy"]["release_mechanism"].startswith("l2-laplace")


def test_noisy_counts_are_the_sum_of_votes_and_binomial_shares(five):
    parameters, report = run(five, method="vote", epsilon=1.0, noisy=True)
    session = report["session_id"]
    records = [five.call(party(j), RoleStub, "GetTestRecord", envelope(session, party(j)), CLIENT).hamm.test_record
               for j in range(1, 6)]
    aux = five.client_data["public_features"]
    for model, record in zip(local_models(five), records):
        assert list(record.votes) == model.predict(aux).astype(int).tolist()
        assert max(record.noise) <= parameters.tosses_per_party
    votes = [np.array(r.votes).reshape(-1, 1) for r in records]
    noise = [np.array(r.noise).reshape(-1, 1) for r in records]
    charlie = five.call(CURATOR, RoleStub, "GetTestRecord", envelope(session, CURATOR), CLIENT).hamm.test_record
    expected = reference.counts(parameters, votes, noise)
    assert np.array_equal(np.array(charlie.counts).reshape(expected.shape), expected)
    assert not any(charlie.eta)  # the release is post-processing of the DP counts
    assert report["privacy"]["tosses_per_party"] == parameters.tosses_per_party > 0


def test_only_charlie_opens_at_the_aggregator_and_bad_parameters_are_refused(five):
    parameters = session_parameters(five.topology, five.client_data, "soft", 1.0, 1e-5, 0.01)
    queries = hamm_pb2.HammQueries(parameters=parameters.to_proto(), deadline_seconds=30)
    forged = envelope("forged-open", AGGREGATOR, party(1), hamm=hamm_pb2.HammMessage(queries=queries))
    with pytest.raises(grpc.RpcError) as refused:
        five.call(AGGREGATOR, RoleStub, "Step", forged, party(1))
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    wrong = parameters.to_proto()
    wrong.aux_points += 1
    opening = hamm_pb2.HammMessage(open=hamm_pb2.HammOpen(parameters=wrong, deadline_seconds=30))
    with pytest.raises(grpc.RpcError) as refused:
        five.call(CURATOR, RoleStub, "AwaitResult", envelope("wrong-n", CURATOR, hamm=opening), CLIENT)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    _, report = run(five)  # the services are ready for the next session
    assert report["result"]["voters"] == 5


def test_the_summary_shows_the_baselines_of_the_same_split(five):
    _, report = run(five)
    view = evaluator_view(five.topology, five.client_data, report)
    assert 0.5 < view["batch"] <= 1 and 0 < view["indiv"]["mean"] <= 1
    # These parties fit logistic-exact, so their parameters can be averaged (the avg baseline).
    assert 0.5 < view["avg"]["non_private"] <= 1 and 0 <= view["avg"]["at_epsilon"] <= 1
    report["evaluator_view"] = view
    text = hamm_commands.summary(report)
    assert f"batch {view['batch']:.1%}" in text and f"avg {view['avg']['at_epsilon']:.1%} at this ε" in text
    # Parties with scikit-learn pipelines have no parameters to average: the summary says so.
    report["evaluator_view"] = {**view, "avg": {"unavailable": "avg needs logistic-exact local models"}}
    assert "avg n/a (avg needs logistic-exact local models)" in hamm_commands.summary(report)


def _votes(session_id: str, sender, parameters, public_key, values=None, tosses=None, certificates=None) -> object:
    """A vote message as `sender` would send it (zeros unless `values`), packed and encrypted, and signed with
    `sender`'s key, found through the operator's topology `certificates` (crypto.md, "Bound decryption")."""
    layout = parameters.layout(public_key.n)
    plaintexts = layout.pack(values if values is not None else [0] * parameters.values)
    encrypted = [ct.to_bytes(public_key.paillier, public_key.encryptor.encrypt(p)) for p in plaintexts]
    signature = threshold_sum_pb2.ContributionSignature()
    if certificates is not None:
        tls = certificates.tls_for(sender)
        certificate, key = tls.certificate, tls.key
        signer = ContributionSigner.from_files(key, certificate)
        digest = SumSlot.of("hamm", session_id, parameters).digest(sender.id, public_key.key_id, encrypted)
        signature = threshold_sum_pb2.ContributionSignature(signature=signer.sign(digest),
                                                            certificate=signer.certificate)
    body = hamm_pb2.HammVotes(tosses=parameters.tosses_per_party if tosses is None else tosses,
                              votes=common_pb2.Ciphertexts(key_id=public_key.key_id, values=encrypted),
                              signature=signature)
    return envelope(session_id, AGGREGATOR, sender, hamm=hamm_pb2.HammMessage(votes=body))


# The session with the late vote ends when that vote arrives: its deadline only has to outlast the injections,
# however slow the machine. The dropout's is waited out in full: long enough for the honest parties to vote.
LATE_VOTE_DEADLINE_S = 300.0
DROPOUT_DEADLINE_S = 20.0


def _accepted_votes(d, session_id: str, number: int) -> bool:
    """Whether the aggregator has taken party `number`'s votes (its traffic log records the Step once handled)."""
    reply = d.call(AGGREGATOR, RoleStub, "GetTraffic", common_pb2.SessionRef(session=session_id), CLIENT)
    return any(r.observed_by == "server" and r.from_role == "party" and r.from_id == number
               and r.rpc == "Step/hamm/votes" and r.status == "OK" for r in reply.records)


def test_out_of_order_malformed_and_replayed_votes_are_refused_and_a_dropout_lowers_m_prime(pool):
    """Party 3 never sends its votes (it drops them); while the aggregator waits, forged, malformed and
    replayed messages are refused with defined statuses, and a late valid vote from party 3 still counts."""
    d = pool.get(3, {3: "drop:Step/hamm/votes"})
    public_key = keyfiles.load_public_key(d.topology.public_key)
    parameters = session_parameters(d.topology, d.client_data, "soft", 2.0, 1e-5, 0.01)
    status = lambda request, sender, to=AGGREGATOR: _status(  # noqa: E731
        lambda: d.call(to, RoleStub, "Step", request, sender))
    with ThreadPoolExecutor(1) as background:
        session = background.submit(lambda: asyncio.run(run_hamm_session(
            d.topology, d.client_data, parameters, deadline_s=LATE_VOTE_DEADLINE_S, session_id="inject")))
        wrong_tosses = _votes("inject", party(3), parameters, public_key, tosses=4)
        # until the aggregator has opened the session (before: FAILED_PRECONDITION)
        assert eventually(lambda: status(wrong_tosses, party(3)) == grpc.StatusCode.INVALID_ARGUMENT), \
            "the aggregator never opened the session"
        short = _votes("inject", party(3), parameters, public_key)
        del short.hamm.votes.votes.values[-1]
        assert status(short, party(3)) == grpc.StatusCode.INVALID_ARGUMENT
        out_of_group = _votes("inject", party(3), parameters, public_key)
        out_of_group.hamm.votes.votes.values[0] = b"\xff" * len(out_of_group.hamm.votes.votes.values[0])
        assert status(out_of_group, party(3)) == grpc.StatusCode.INVALID_ARGUMENT
        # Wrong senders: a party cannot vote as another, send X_aux, or hand Charlie an aggregate.
        assert status(_votes("inject", party(2), parameters, public_key), party(3)) == grpc.StatusCode.PERMISSION_DENIED
        aggregate = envelope("inject", CURATOR, party(3), hamm=hamm_pb2.HammMessage(aggregate=hamm_pb2.HammAggregate()))
        assert status(aggregate, party(3), CURATOR) == grpc.StatusCode.PERMISSION_DENIED
        partials = envelope("inject", AGGREGATOR, party(3), hamm=hamm_pb2.HammMessage(
            partial_decryptions=threshold_sum_pb2.PartialDecryptions()))
        assert status(partials, party(3)) == grpc.StatusCode.INVALID_ARGUMENT  # to Charlie, not the aggregator
        # Party 1 has voted: its replay is refused. Party 3's late but valid vote (all zeros) is counted.
        signed = d.topology
        assert eventually(lambda: _accepted_votes(d, "inject", 1)), "party 1's votes never reached the aggregator"
        assert status(_votes("inject", party(1), parameters, public_key, certificates=signed), party(1)) \
            == grpc.StatusCode.FAILED_PRECONDITION
        # Unsigned, or signed for another session, party 3's votes are refused; signed for this one, counted.
        assert status(_votes("inject", party(3), parameters, public_key), party(3)) == grpc.StatusCode.PERMISSION_DENIED
        elsewhere = _votes("elsewhere", party(3), parameters, public_key, certificates=signed)
        elsewhere.session_id = "inject"
        assert status(elsewhere, party(3)) == grpc.StatusCode.PERMISSION_DENIED
        d.call(AGGREGATOR, RoleStub, "Step", _votes("inject", party(3), parameters, public_key, certificates=signed),
               party(3))
        report = session.result(timeout=LATE_VOTE_DEADLINE_S + 300)
    assert report["result"]["voters"] == 3 and report["result"]["contributors"] == [1, 2, 3]
    # Without the late vote, party 3 is a dropout: M′ = 2 after the deadline, and the release uses M′.
    dropped = asyncio.run(run_hamm_session(d.topology, d.client_data, parameters, deadline_s=DROPOUT_DEADLINE_S))
    assert dropped["result"]["voters"] == 2 and dropped["privacy"]["voters"] == 2
    assert "2/(M′λ)" in dropped["privacy"]["release_sensitivity"]
