"""DPPP over real processes on loopback ports (dppp.md, "What must hold")."""

from collections import Counter

import grpc
import numpy as np
import pytest

from dppp.reference import labels as argmax_labels
from dppp.reference import noisy_histograms
from mpdp_proto.v1 import aggregator_pb2_grpc, common_pb2, dppp_pb2, party_pb2_grpc
from sessions.identity import AGGREGATOR, CLIENT, party
from tests.deployment import deployment
from tests.dppp_faults import FAULTS_K5, FAULTS_K8, TAMPERER
from wire import convert


def closed_form_counts(teachers: int, holders: int, crashed_holders: int = 0) -> Counter:
    """Messages per (from, to, rpc) in one round: query delivery, steps 2, 4 and 5.

    A holder that dies on receiving step 4 is still sent it, but never sends step 5.
    """
    answering = holders - crashed_holders
    return Counter({
        ("client", "aggregator", "RunDpppRound"): 1,
        ("aggregator", "party", "DeliverDpppQueries"): teachers,
        ("party", "aggregator", "SubmitDpppVotes"): teachers,
        ("aggregator", "party", "RequestDpppPartialDecryption"): holders,
        ("party", "aggregator", "SubmitDpppPartialDecryptions"): answering,
    })


def observed_counts(report: dict, key: str = "traffic") -> Counter:
    return Counter({(row["from"], row["to"], row["rpc"]): row["messages"] for row in report[key]})




@pytest.fixture
def five(pool):
    """K = 5 (t = 4) with party 2 tampering with its partial decryptions."""
    return pool.get(5, FAULTS_K5)


def test_round_equals_the_sum_of_the_teachers_votes_and_noise(five):
    report = five.run_dppp()
    records = five.test_records(report["session_id"])
    contributors = report["result"]["contributors"]
    assert contributors == [1, 2, 3, 4, 5]
    queries, classes = report["parameters"]["queries"], report["parameters"]["classes"]
    votes = [np.array(records[i].votes).reshape(queries, classes) for i in contributors]
    noise = [np.array(records[i].noise).reshape(queries, classes) for i in contributors]
    tosses = report["privacy"]["tosses_per_teacher"]
    assert all(np.all(v.sum(axis=1) == 1) for v in votes)  # one-hot
    assert all(np.all((z >= 0) & (z <= tosses)) for z in noise)
    expected = noisy_histograms(votes, noise, tosses)
    assert np.array_equal(np.array(report["result"]["histograms"]), expected)
    assert report["result"]["labels"] == argmax_labels(expected).tolist()
    # The tampered share was detected, named and excluded; t = 4 others decrypted.
    assert list(report["result"]["rejected_shares"]) == [str(TAMPERER)]
    assert "does not verify" in report["result"]["rejected_shares"][str(TAMPERER)]
    assert TAMPERER not in report["result"]["decryptors"] and len(report["result"]["decryptors"]) == 4
    assert set(report) >= {"protocol", "parameters", "result", "privacy", "traffic", "timing"}
    assert report["privacy"]["mechanism"] == "binomial" and report["privacy"]["epsilon_all_queries"] <= 10.0


def test_message_counts_match_the_closed_form_k5(five):
    report = five.run_dppp(queries=30)
    assert observed_counts(report) == closed_form_counts(5, 5)
    assert observed_counts(report, "traffic_client_observed") == closed_form_counts(5, 5)
    # Packed: 30 queries × 2 classes fit one ciphertext per teacher.
    votes = next(r for r in report["traffic"] if r["rpc"] == "SubmitDpppVotes")
    assert 5 * 256 <= votes["request_bytes"] < 5 * 2 * 256


def test_unpacked_baseline_sends_one_ciphertext_per_slot(five):
    report = five.run_dppp(queries=6, packed=False)
    votes = next(r for r in report["traffic"] if r["rpc"] == "SubmitDpppVotes")
    assert votes["request_bytes"] >= 5 * 12 * 256
    records = five.test_records(report["session_id"])
    expected = noisy_histograms(
        [np.array(records[i].votes).reshape(6, 2) for i in report["result"]["contributors"]],
        [np.array(records[i].noise).reshape(6, 2) for i in report["result"]["contributors"]],
        report["privacy"]["tosses_per_teacher"],
    )
    assert np.array_equal(np.array(report["result"]["histograms"]), expected)


def _status(call) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as raised:
        call()
    return raised.value.code()


def _round_request(five, **changes):
    public_key_id = bytes.fromhex(five.call(AGGREGATOR, aggregator_pb2_grpc.AggregatorStub, "GetStatus",
                                            common_pb2.Empty(), CLIENT).key_id_hex)
    parameters = dict(epsilon=5.0, delta=1e-5, queries=3, classes=2, teachers=5, honest_fraction=2 / 3,
                      packed=True, key_id=public_key_id)
    parameters.update(changes.pop("parameters", {}))
    features = changes.pop("features", five.client_data["public_features"][:3])
    return dppp_pb2.DpppRoundRequest(session_id=changes.pop("session_id", "bad-input"),
                                     parameters=dppp_pb2.DpppParameters(**parameters),
                                     features=convert.matrix_to_proto(features), deadline_seconds=10)


def test_bad_input_gets_a_clear_status_and_changes_nothing(five):
    agg, party_stub = aggregator_pb2_grpc.AggregatorStub, party_pb2_grpc.PartyStub
    run = lambda request, sender=CLIENT: five.call(AGGREGATOR, agg, "RunDpppRound", request, sender)  # noqa: E731
    # Wrong sender for the client's RPC (its certificate says party/1, whatever it declares).
    assert _status(lambda: run(_round_request(five), party(1))) == grpc.StatusCode.PERMISSION_DENIED
    assert _status(lambda: five.call(AGGREGATOR, agg, "RunDpppRound", _round_request(five), party(1),
                                     declare=CLIENT)) == grpc.StatusCode.PERMISSION_DENIED
    # Malformed parameters, wrong sizes, wrong key id.
    assert _status(lambda: run(_round_request(five, parameters={"epsilon": -1}))) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: run(_round_request(five, parameters={"queries": 4}))) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: run(_round_request(five, parameters={"teachers": 4}))) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: run(_round_request(five, parameters={"key_id": b"\x01" * 32}))) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: run(_round_request(five, session_id=""))) == grpc.StatusCode.INVALID_ARGUMENT
    bad_matrix = dppp_pb2.DpppRoundRequest(session_id="m", parameters=_round_request(five).parameters,
                                           features=common_pb2.Matrix(rows=3, columns=30, values=[0.0] * 7))
    assert _status(lambda: run(bad_matrix)) == grpc.StatusCode.INVALID_ARGUMENT
    # Step messages for an unknown session, out of order, from the wrong sender.
    votes = dppp_pb2.DpppVotes(session_id="nope", teacher=1, tosses=2,
                               votes=common_pb2.Ciphertexts(key_id=b"k", values=[b"x"]))
    assert _status(lambda: five.call(AGGREGATOR, agg, "SubmitDpppVotes", votes, party(1))) == grpc.StatusCode.FAILED_PRECONDITION
    partials = dppp_pb2.DpppPartialDecryptions(session_id="nope", holder=1)
    assert _status(lambda: five.call(AGGREGATOR, agg, "SubmitDpppPartialDecryptions", partials, party(1))) == grpc.StatusCode.FAILED_PRECONDITION
    decrypt = dppp_pb2.DpppDecryptionRequest(session_id="nope", contributors=[1, 2, 3, 4])
    assert _status(lambda: five.call(party(1), party_stub, "RequestDpppPartialDecryption", decrypt, AGGREGATOR)) == grpc.StatusCode.FAILED_PRECONDITION
    queries = dppp_pb2.DpppQueries(session_id="q1", parameters=_round_request(five).parameters,
                                   features=convert.matrix_to_proto(five.client_data["public_features"][:3]))
    assert _status(lambda: five.call(party(1), party_stub, "DeliverDpppQueries", queries, CLIENT)) == grpc.StatusCode.PERMISSION_DENIED
    assert _status(lambda: five.call(party(1), party_stub, "DeliverDpppQueries", queries, party(2))) == grpc.StatusCode.PERMISSION_DENIED
    # A delivery from the (declared) aggregator is accepted once; the replay is refused.
    five.call(party(1), party_stub, "DeliverDpppQueries", queries, AGGREGATOR)
    assert _status(lambda: five.call(party(1), party_stub, "DeliverDpppQueries", queries, AGGREGATOR)) == grpc.StatusCode.FAILED_PRECONDITION
    # Decryption requests for that session: too few contributors, wrong key, invalid ciphertexts, wrong count.
    key_id = queries.parameters.key_id
    request = lambda contributors, key, values: dppp_pb2.DpppDecryptionRequest(  # noqa: E731
        session_id="q1", contributors=contributors, aggregate=common_pb2.Ciphertexts(key_id=key, values=values))
    ask = lambda r: five.call(party(1), party_stub, "RequestDpppPartialDecryption", r, AGGREGATOR)  # noqa: E731
    assert _status(lambda: ask(request([1, 2, 3], key_id, [b"\x01" * 256]))) == grpc.StatusCode.FAILED_PRECONDITION
    assert _status(lambda: ask(request([1, 2, 3, 4], b"\x00" * 32, [b"\x01" * 256]))) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: ask(request([1, 2, 3, 4], key_id, [b"\x00" * 256]))) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: ask(request([1, 2, 3, 4], key_id, [b"\x01" * 255]))) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: ask(request([1, 2, 3, 4], key_id, [b"\x01" * 256] * 2))) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: ask(request([1, 1, 2, 3], key_id, [b"\x01" * 256]))) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: five.call(party(1), party_stub, "GetDpppTestRecord", common_pb2.SessionRef(session="nope"), CLIENT)) == grpc.StatusCode.FAILED_PRECONDITION
    # The services keep serving: a full round still succeeds.
    report = five.run_dppp(queries=4)
    assert report["result"]["contributors"] == [1, 2, 3, 4, 5]


def test_too_few_contributors_abort_and_release_nothing(tmp_path):
    """Kills two of four teachers (K = 4 needs ⌈2/3·4⌉ = 3 contributors)."""
    with deployment(tmp_path, 4) as four:
        four.kill(party(3))
        four.kill(party(4))
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            four.run_dppp(queries=4, session_id="starved")
        assert raised.value.code() == grpc.StatusCode.ABORTED
        assert "insufficient noise" in raised.value.details() and "2 of 4" in raised.value.details()
        # Everyone aborted the session; the aggregator still serves.
        for number in (1, 2):
            status = four.call(party(number), party_pb2_grpc.PartyStub, "GetStatus", common_pb2.Empty(), CLIENT)
            assert "starved" not in status.open_sessions
        status = four.call(AGGREGATOR, aggregator_pb2_grpc.AggregatorStub, "GetStatus", common_pb2.Empty(), CLIENT)
        assert "starved" not in status.open_sessions


def test_message_counts_k3(pool):
    report = pool.get(3).run_dppp(queries=5)
    assert observed_counts(report) == closed_form_counts(3, 3)


def test_key_holders_killed_after_voting_do_not_stop_the_round(pool):
    """K = 8, t = 6: the two holders allowed to fail die when asked to decrypt."""
    eight = pool.get(8, FAULTS_K8)
    report = eight.run_dppp(queries=5)
    assert report["result"]["contributors"] == list(range(1, 9))  # they voted
    assert report["result"]["decryptors"] == [1, 2, 3, 4, 5, 6]
    assert observed_counts(report) == closed_form_counts(8, 8, crashed_holders=2)
    client_view = observed_counts(report, "traffic_client_observed")
    assert client_view[("aggregator", "party", "RequestDpppPartialDecryption")] == 8
    assert set(eight.test_records(report["session_id"])) == set(range(1, 7))  # 7 and 8 are dead
    # Bring them back (without the fault) so the deployment serves the other tests whole.
    eight.restart(party(7))
    eight.restart(party(8))


def test_costly_requests_are_refused_after_cheap_checks(five):
    """A wrong key id is refused before the calibration runs; a legitimate ε that needs more than the noise cap
    gets one clear INVALID_ARGUMENT instead of minutes and gigabytes in every teacher."""
    agg, party_stub = aggregator_pb2_grpc.AggregatorStub, party_pb2_grpc.PartyStub
    tiny = {"epsilon": 0.001, "queries": 3}
    with pytest.raises(grpc.RpcError) as refused:
        five.call(AGGREGATOR, agg, "RunDpppRound", _round_request(five, parameters={**tiny, "key_id": b"\x01" * 32},
                                                                   session_id="costly-1"), CLIENT)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "key id" in refused.value.details()
    queries = dppp_pb2.DpppQueries(session_id="costly-2", parameters=_round_request(five, parameters={
        **tiny, "key_id": b"\x01" * 32}).parameters, features=convert.matrix_to_proto(five.client_data["public_features"][:3]))
    with pytest.raises(grpc.RpcError) as refused:
        five.call(party(1), party_stub, "DeliverDpppQueries", queries, AGGREGATOR)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "key id" in refused.value.details()
    with pytest.raises(grpc.RpcError) as refused:
        five.call(AGGREGATOR, agg, "RunDpppRound", _round_request(five, parameters=tiny, session_id="costly-3"), CLIENT)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "tosses" in refused.value.details()
