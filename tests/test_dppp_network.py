"""DPPP over real processes on loopback ports (dppp.md, "What must hold")."""

from collections import Counter

import grpc
import numpy as np
import pytest

from mpdp.privacy.binomial import minimal_tosses
from mpdp.proto.v1 import common_pb2, dppp_pb2, pathak_pb2, threshold_sum_pb2
from mpdp.proto.v1.role_pb2_grpc import RoleStub
from mpdp.protocols.dppp.parameters import default_threshold
from mpdp.protocols.dppp.reference import labels as argmax_labels
from mpdp.protocols.dppp.reference import noisy_histograms
from mpdp.sessions.identity import AGGREGATOR, CLIENT, party
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.vote_proofs.assurance import Assurance
from tests.deployment import deployment, envelope
from tests.dppp_faults import FAULTS_K5, FAULTS_K8, TAMPERER
from tests.hostile_aggregator import client_signed

SIGNED = 1024  # a contribution's ECDSA signature and its sender's certificate (DER), with framing: < 1 KiB


def closed_form_counts(teachers: int, holders: int, failed_holders: int = 0, crashed_holders: int = 0,
                       verifiable_noise: bool = False, threshold: int | None = None) -> Counter:
    """Messages per (from, to, rpc) in one round: query delivery, steps 2, 4 and 5, and the stand-downs; with
    verifiable noise also steps 2b–2d (every entry of the joint coin to each committed teacher and its coin share
    back, every share to each and its flipped contribution back).

    t holders (the key's; by default ⌊2ℓ/3⌋ + 1) are asked first and one more for each that fails (a bad share
    or a crash); a holder that dies on receiving step 4 is still sent it, but never sends step 5; holders never
    asked are told to stand down.
    """
    asked = min(holders, (threshold or default_threshold(holders)) + failed_holders)
    return Counter({
        ("client", "aggregator", "AwaitResult/dppp/open"): 1,
        ("aggregator", "party", "Step/dppp/queries"): teachers,
        ("party", "aggregator", "Step/dppp/votes"): teachers,
        ("aggregator", "party", "Step/dppp/decryption_request"): asked,
        ("party", "aggregator", "Step/dppp/partial_decryptions"): asked - crashed_holders,
        ("aggregator", "party", "Step/dppp/stand_down"): holders - asked,
        **({("aggregator", "party", "Step/dppp/coin"): teachers,
            ("party", "aggregator", "Step/dppp/reveal"): teachers,
            ("aggregator", "party", "Step/dppp/shares"): teachers,
            ("party", "aggregator", "Step/dppp/flipped"): teachers} if verifiable_noise else {}),
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
    assert observed_counts(report) == closed_form_counts(5, 5, failed_holders=1)  # the tamperer is replaced
    assert observed_counts(report, "traffic_client_observed") == closed_form_counts(5, 5, failed_holders=1)
    # Packed: 30 queries × 2 classes fit one ciphertext per teacher, sent with its signature and certificate
    # (crypto.md, "Bound decryption"); each holder asked gets every teacher's.
    votes = next(r for r in report["traffic"] if r["rpc"] == "Step/dppp/votes")
    assert 5 * 256 <= votes["request_bytes"] < 5 * (2 * 256 + SIGNED)
    requests = next(r for r in report["traffic"] if r["rpc"] == "Step/dppp/decryption_request")
    assert 5 * 5 * 256 <= requests["request_bytes"] < 5 * 5 * (2 * 256 + SIGNED)  # 5 holders asked, 5 votes each


def test_skellam_shares_over_the_wire_sum_to_the_released_noise(pool):
    """--noise skellam: each teacher adds Sk(μ/K′) + B per slot; the release is Σ votes + Σ shares − K′·B exactly."""
    three = pool.get(3)
    report = three.run_dppp(queries=8, noise="skellam")
    records = three.test_records(report["session_id"])
    contributors = report["result"]["contributors"]
    privacy = report["privacy"]
    assert privacy["mechanism"] == "skellam" and privacy["epsilon_all_queries"] <= 10.0
    bound = privacy["truncation_bound"]
    votes = [np.array(records[i].votes).reshape(8, 2) for i in contributors]
    shares = [np.array(records[i].noise).reshape(8, 2) for i in contributors]
    assert all(np.all((z >= 0) & (z <= 2 * bound)) for z in shares)
    expected = noisy_histograms(votes, shares, 2 * bound)
    assert np.array_equal(np.array(report["result"]["histograms"]), expected)


def test_unpacked_baseline_sends_one_ciphertext_per_slot(five):
    report = five.run_dppp(queries=6, packed=False)
    votes = next(r for r in report["traffic"] if r["rpc"] == "Step/dppp/votes")
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
    public_key_id = bytes.fromhex(five.call(AGGREGATOR, RoleStub, "GetStatus", common_pb2.Empty(), CLIENT).key_id_hex)
    parameters = dict(epsilon=5.0, delta=1e-5, queries=3, classes=2, teachers=5, honest_fraction=2 / 3,
                      packed=True, key_id=public_key_id, total_tosses=minimal_tosses(5.0, 1e-5, 3), noise="binomial")
    parameters.update(changes.pop("parameters", {}))
    features = changes.pop("features", five.client_data["public_features"][:3])
    request = dppp_pb2.DpppRoundRequest(parameters=dppp_pb2.DpppParameters(**parameters),
                                        features=matrix_to_proto(features), deadline_seconds=10)
    return envelope(changes.pop("session_id", "bad-input"), AGGREGATOR, dppp=dppp_pb2.DpppMessage(open=request))


def _dppp(session_id, receiver, sender, **body):
    return envelope(session_id, receiver, sender, dppp=dppp_pb2.DpppMessage(**body))


def test_bad_input_gets_a_clear_status_and_changes_nothing(five):
    run = lambda request, sender=CLIENT: five.call(AGGREGATOR, RoleStub, "AwaitResult", request, sender)  # noqa: E731
    step = lambda to, message, sender: five.call(to, RoleStub, "Step", message, sender)  # noqa: E731
    # Wrong sender for the client's RPC (its certificate says party/1, whatever it declares).
    assert _status(lambda: run(_round_request(five), party(1))) == grpc.StatusCode.PERMISSION_DENIED
    assert _status(lambda: five.call(AGGREGATOR, RoleStub, "AwaitResult", _round_request(five), party(1),
                                     declare=CLIENT)) == grpc.StatusCode.PERMISSION_DENIED
    # Malformed parameters, wrong sizes, wrong key id.
    assert _status(lambda: run(_round_request(five, parameters={"epsilon": -1}))) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: run(_round_request(five, parameters={"queries": 4}))) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: run(_round_request(five, parameters={"teachers": 4}))) == grpc.StatusCode.INVALID_ARGUMENT
    lowered = minimal_tosses(5.0, 1e-5, 3) - 2  # less noise than (ε, δ) needs
    assert _status(lambda: run(_round_request(five, parameters={"total_tosses": lowered}))) == \
        grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: run(_round_request(five, parameters={"key_id": b"\x01" * 32}))) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: run(_round_request(five, session_id=""))) == grpc.StatusCode.INVALID_ARGUMENT
    bad_matrix = _round_request(five, session_id="m")
    bad_matrix.dppp.open.features.CopyFrom(common_pb2.Matrix(rows=3, columns=30, values=[0.0] * 7))
    assert _status(lambda: run(bad_matrix)) == grpc.StatusCode.INVALID_ARGUMENT
    # Misaddressed envelopes: a receiver not hosted there, a protocol the role does not run, no body.
    misaddressed = _round_request(five, session_id="addr")
    misaddressed.receiver = "curator/0"
    assert _status(lambda: run(misaddressed)) == grpc.StatusCode.INVALID_ARGUMENT
    pathak_at_aggregator = envelope("addr", AGGREGATOR, pathak=pathak_pb2.PathakMessage(start=common_pb2.Empty()))
    assert _status(lambda: step(AGGREGATOR, pathak_at_aggregator, CLIENT)) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(lambda: step(AGGREGATOR, envelope("addr", AGGREGATOR), CLIENT)) == grpc.StatusCode.INVALID_ARGUMENT
    # A sender the caller's certificate does not cover.
    forged = _dppp("nope", AGGREGATOR, party(2), votes=dppp_pb2.DpppVotes(tosses=2))
    assert _status(lambda: step(AGGREGATOR, forged, party(1))) == grpc.StatusCode.PERMISSION_DENIED
    # Step messages for an unknown session, out of order, from the wrong sender.
    votes = _dppp("nope", AGGREGATOR, party(1), votes=dppp_pb2.DpppVotes(
        tosses=2, votes=common_pb2.Ciphertexts(key_id=b"k", values=[b"x"])))
    assert _status(lambda: step(AGGREGATOR, votes, party(1))) == grpc.StatusCode.FAILED_PRECONDITION
    partials = _dppp("nope", AGGREGATOR, party(1), partial_decryptions=threshold_sum_pb2.PartialDecryptions())
    assert _status(lambda: step(AGGREGATOR, partials, party(1))) == grpc.StatusCode.FAILED_PRECONDITION
    decrypt = _dppp("nope", party(1), AGGREGATOR,
                    decryption_request=threshold_sum_pb2.DecryptionRequest(
                        contributions=[threshold_sum_pb2.Contribution(sender=s) for s in (1, 2, 3, 4)]))
    assert _status(lambda: step(party(1), decrypt, AGGREGATOR)) == grpc.StatusCode.FAILED_PRECONDITION
    request = _round_request(five).dppp.open
    queries = dppp_pb2.DpppQueries(parameters=request.parameters, features=request.features, deadline_seconds=10)
    assert _status(lambda: step(party(1), _dppp("q1", party(1), CLIENT, queries=queries), CLIENT)) \
        == grpc.StatusCode.PERMISSION_DENIED
    assert _status(lambda: step(party(1), _dppp("q1", party(1), party(2), queries=queries), party(2))) \
        == grpc.StatusCode.PERMISSION_DENIED
    # Unsigned by the client, a delivery from the aggregator's certificate is refused; signed, it is accepted once
    # and the replay is refused.
    assert _status(lambda: step(party(1), _dppp("q1", party(1), AGGREGATOR, queries=queries), AGGREGATOR)) \
        == grpc.StatusCode.PERMISSION_DENIED
    queries = client_signed(five.topology, "q1", "dppp", queries)
    step(party(1), _dppp("q1", party(1), AGGREGATOR, queries=queries), AGGREGATOR)
    # (The aggregator knows no session q1, so the teacher's votes are undeliverable and it may already have
    # ended its side quietly: the replay is refused either way.)
    assert _status(lambda: step(party(1), _dppp("q1", party(1), AGGREGATOR, queries=queries), AGGREGATOR)) \
        in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ABORTED)
    assert _status(lambda: five.call(party(1), RoleStub, "GetTestRecord", envelope("nope", party(1)), CLIENT)) \
        == grpc.StatusCode.FAILED_PRECONDITION
    # The services keep serving: a full round still succeeds.
    report = five.run_dppp(queries=4)
    assert report["result"]["contributors"] == [1, 2, 3, 4, 5]


def test_too_few_contributors_abort_and_release_nothing(tmp_path):
    """Kills two of four teachers (K = 4 needs ⌈2/3·4⌉ = 3 contributors)."""
    with deployment(tmp_path, 4) as four:
        four.kill(party(3))
        four.kill(party(4))
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            four.run_dppp(queries=4, session_id="starved")  # ends when the dead two are found unreachable
        assert raised.value.code() == grpc.StatusCode.ABORTED
        assert "insufficient noise" in raised.value.details() and "2 of 4" in raised.value.details()
        # Everyone aborted the session; the aggregator still serves.
        for number in (1, 2):
            status = four.call(party(number), RoleStub, "GetStatus", common_pb2.Empty(), CLIENT)
            assert "starved" not in status.open_sessions
        status = four.call(AGGREGATOR, RoleStub, "GetStatus", common_pb2.Empty(), CLIENT)
        assert "starved" not in status.open_sessions


def test_message_counts_k3(pool):
    report = pool.get(3).run_dppp(queries=5)
    assert observed_counts(report) == closed_form_counts(3, 3)  # t = 3: every holder is asked


def test_message_and_byte_counts_k3_verifiable_noise(pool):
    """Step 2 carries Q·C·N_i bit ciphertexts per teacher, each with two commitments (< n² each), two 128-bit
    challenges and two responses (< 2^(|n|/2 + 257)), beside Q proven votes; the coin carries K entries of
    (number, digest, coin commitment); a reveal is one share, the shares K of them; a flipped contribution is one
    signature."""
    three = pool.get(3)
    queries = 5
    report = three.run_dppp(queries=queries, assurance=Assurance.VERIFIABLE_NOISE, deadline_s=120.0)
    assert observed_counts(report) == closed_form_counts(3, 3, verifiable_noise=True)
    rows = {row["rpc"]: row for row in report["traffic"]}
    classes, tosses = report["parameters"]["classes"], report["privacy"]["tosses_per_teacher"]
    width = 256  # a 1024-bit key's n², in bytes
    bits = queries * classes * tosses
    per_bit_max = 3 * width + 2 * 16 + 2 * (width // 4 + 34) + 24  # numbers plus field framing
    assert 3 * bits * 3 * (width - 2) <= rows["Step/dppp/votes"]["request_bytes"] < 3 * (bits + queries * 2) * per_bit_max
    assert rows["Step/dppp/coin"]["request_bytes"] < 3 * 3 * (4 + 32 + 32 + 12) + 3 * 64
    assert 3 * 32 <= rows["Step/dppp/reveal"]["request_bytes"] < 3 * (32 + 64)
    assert rows["Step/dppp/shares"]["request_bytes"] < 3 * 3 * (4 + 32 + 8) + 3 * 64
    assert rows["Step/dppp/flipped"]["request_bytes"] < 3 * (SIGNED + 64)
    # Each of the t = 3 holders gets every teacher's vote ciphertexts with their proofs and its bit ciphertexts
    # (their proofs stay with the aggregator without --assurance holders-check-bits), its signed commitment and flipped
    # contribution, and the coin's entries and shares (docs/malicious-party.md, "Checked where it is decrypted").
    per_teacher_min = (bits + queries) * (width - 2) + queries * 2 * (width - 2)  # the votes and their commitments
    per_teacher_max = bits * (width + 8) + queries * per_bit_max + 4 * (width + 8) + 2 * (SIGNED + 16)
    coin = 3 * (4 + 32 + 32 + 12) + 3 * (4 + 32 + 8)
    decryption = rows["Step/dppp/decryption_request"]["request_bytes"]
    assert 3 * 3 * per_teacher_min <= decryption < 3 * (3 * per_teacher_max + coin + 64)


def test_key_holders_killed_after_voting_do_not_stop_the_round(pool):
    """K = 8, t = 6: two of the holders asked first die when asked to decrypt; the two not asked replace them."""
    eight = pool.get(8, FAULTS_K8)
    report = eight.run_dppp(queries=5)
    assert report["result"]["contributors"] == list(range(1, 9))  # they voted
    assert report["result"]["decryptors"] == [3, 4, 5, 6, 7, 8]
    assert observed_counts(report) == closed_form_counts(8, 8, failed_holders=2, crashed_holders=2)
    client_view = observed_counts(report, "traffic_client_observed")
    assert client_view[("aggregator", "party", "Step/dppp/decryption_request")] == 8
    assert set(eight.test_records(report["session_id"])) == set(range(3, 9))  # 1 and 2 are dead
    # Bring them back (without the fault) so the deployment serves the other tests whole.
    eight.restart(party(1))
    eight.restart(party(2))


def test_costly_requests_are_refused_after_cheap_checks(five):
    """A wrong key id is refused before the calibration runs; a legitimate ε that needs more than the noise cap
    gets one clear INVALID_ARGUMENT instead of minutes and gigabytes in every teacher."""
    tiny = {"epsilon": 0.001, "queries": 3}
    with pytest.raises(grpc.RpcError) as refused:
        five.call(AGGREGATOR, RoleStub, "AwaitResult", _round_request(
            five, parameters={**tiny, "key_id": b"\x01" * 32}, session_id="costly-1"), CLIENT)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "key id" in refused.value.details()
    request = _round_request(five, parameters={**tiny, "key_id": b"\x01" * 32}).dppp.open
    queries = dppp_pb2.DpppQueries(parameters=request.parameters, features=request.features, deadline_seconds=10)
    with pytest.raises(grpc.RpcError) as refused:
        five.call(party(1), RoleStub, "Step", _dppp("costly-2", party(1), AGGREGATOR,
                                                    queries=client_signed(five.topology, "costly-2", "dppp", queries)),
                  AGGREGATOR)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "key id" in refused.value.details()
    with pytest.raises(grpc.RpcError) as refused:
        five.call(AGGREGATOR, RoleStub, "AwaitResult", _round_request(five, parameters=tiny, session_id="costly-3"),
                  CLIENT)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "tosses" in refused.value.details()
