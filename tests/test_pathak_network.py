"""Pathak–Rane–Raj over real processes (pathak.md, "What must hold")."""

from collections import Counter

import grpc
import numpy as np
import pytest

from launcher.registry import PROTOCOLS
from mpdp.learning import datasets
from mpdp.learning.pathak_local import train
from mpdp.proto.v1 import common_pb2, pathak_pb2
from mpdp.proto.v1.role_pb2_grpc import RoleStub
from mpdp.protocols.pathak.noise import noise_source
from mpdp.protocols.pathak.reference import perturbed_average
from mpdp.sessions.identity import CLIENT, CURATOR, party
from tests.deployment import deployment, envelope
from tests.dppp_faults import FAULTS_K5, FAULTS_K8

SEED = 424242


def closed_form(k: int, self_routed: int) -> Counter:
    """Messages per (from, to, Step/pathak/kind) in one session; self-deliveries are local and not in it."""
    pp, pc, cp = ("party", "party"), ("party", "curator"), ("curator", "party")
    counts = {
        ("client", "party", "Step/pathak/open"): k, ("client", "party", "Step/pathak/start"): k,
        ("client", "curator", "Step/pathak/open"): 1, ("client", "curator", "Step/pathak/start"): 1,
        ("client", "party", "AwaitResult"): k, ("client", "curator", "AwaitResult"): 1,
        (*cp, "Step/pathak/curator_key"): k, (*pp, "Step/pathak/party_key"): k - 1,
        (*pc, "Step/pathak/party_public_key"): 1,
        (*pp, "Step/pathak/commitment"): k * (k - 1), (*pp, "Step/pathak/reveal"): k * (k - 1),
        (*pp, "Step/pathak/routed_share"): k - self_routed,
        (*pp, "Step/pathak/barrier_ready"): k - 1, (*pp, "Step/pathak/barrier_release"): k - 1,
        (*pc, "Step/pathak/stage1_element"): k, (*cp, "Step/pathak/masked_share"): k,
        (*pp, "Step/pathak/masked_value"): k - 1, (*pc, "Step/pathak/ready_to_compare"): 1,
        # One message per tournament round each way (⌈log₂ K⌉ rounds of K − 1 comparisons in all).
        (*cp, "Step/pathak/compare_request"): (k - 1).bit_length(), (*pc, "Step/pathak/compare_reply"): (k - 1).bit_length(),
        (*cp, "Step/pathak/indicator"): 1, (*pp, "Step/pathak/indicator_element"): k - 1,
        (*pp, "Step/pathak/selected_noise"): k - 1, (*pc, "Step/pathak/masked_noise"): 1,
        (*pp, "Step/pathak/share"): k * (k - 1), (*pc, "Step/pathak/share"): k, (*cp, "Step/pathak/share"): k,
    }
    return Counter({key: value for key, value in counts.items() if value})


def observed(report: dict) -> Counter:
    return Counter({(r["from"], r["to"], r["rpc"]): r["messages"] for r in report["evaluator_view"]["traffic"]})


@pytest.mark.parametrize("parties, faults, split", [(3, None, "10"), (5, FAULTS_K5, "even"), (8, FAULTS_K8, "even")])
def test_networked_result_equals_the_reference_and_the_closed_form(pool, parties, faults, split):
    d = pool.get(parties, faults, split)
    report = d.run_pathak(noise_seed=SEED, mechanism="gaussian")
    parameters = d.pathak_parameters(noise_seed=SEED, mechanism="gaussian")
    # The reference recomputes everything from the parties' data files and the same seeded streams.
    models, noises, sizes = [], [], []
    for entry in d.topology.parties:
        features, labels, _ = datasets.load_part(entry.data)
        models.append(train(features, labels, parameters.regularization, parameters.gradient_tolerance))
        noises.append(parameters.noise.sample(len(labels), noise_source(SEED, entry.identity.id)))
        sizes.append(len(labels))
    records = d.pathak_records(report["session_id"])
    assert [r.records for r in records.values()] == sizes
    assert all(list(records[j].noise) == noises[j - 1] for j in records)
    expected = perturbed_average(models, noises, sizes, parameters.fractional_bits)
    assert np.max(np.abs(np.array(report["result"]["w"]) - expected)) <= 2**-20
    self_routed = sum(kinds.get("routed_share", 0) for kinds in report["evaluator_view"]["self_deliveries"].values())
    assert observed(report) == closed_form(parties, self_routed)
    # `mpdp verify` re-adds the published shares the report carries (launcher/protocols/pathak/transcript.py).
    assert any("published shares add up" in line for line in PROTOCOLS["pathak"].verify(report, None, None))
    assert report["evaluator_view"]["self_deliveries"]["party/1"]["barrier_ready"] == 1  # the leader's own, local
    assert report["privacy"]["mechanism"] == "gaussian" and report["parameters"]["comparison_bits"] == 33 + (parties - 1).bit_length()


def closed_form_distributed(k: int) -> Counter:
    """Distributed noise: no Stage 1 or 2, only the additive sharing (pathak.md "Beyond the paper")."""
    pp, pc, cp = ("party", "party"), ("party", "curator"), ("curator", "party")
    return Counter({
        ("client", "party", "Step/pathak/open"): k, ("client", "party", "Step/pathak/start"): k,
        ("client", "curator", "Step/pathak/open"): 1, ("client", "curator", "Step/pathak/start"): 1,
        ("client", "party", "AwaitResult"): k, ("client", "curator", "AwaitResult"): 1,
        (*pp, "Step/pathak/share"): k * (k - 1), (*pc, "Step/pathak/share"): k, (*cp, "Step/pathak/share"): k,
    })


def test_distributed_noise_over_the_wire_equals_the_reference_and_its_closed_form(pool):
    """`--noise-source distributed`: the networked release is the average plus every party's seeded share, with
    only the additive sharing on the wire; the report says Stage 1 was skipped and what ε the release gives."""
    from mpdp.protocols.pathak.reference import distributed_average

    d = pool.get(3, None, "10")
    sizes = [int(s) for s in d.client_data["party_sizes"]]
    options = dict(noise_seed=SEED, mechanism="gaussian", noise_source="distributed", calibrate_to="n_min",
                   n_min=min(sizes))
    report = d.run_pathak(**options)
    parameters = d.pathak_parameters(**options)
    models, shares = [], []
    for entry in d.topology.parties:
        features, labels, _ = datasets.load_part(entry.data)
        models.append(train(features, labels, parameters.regularization, parameters.gradient_tolerance))
        shares.append(parameters.distributed_noise.sample(noise_source(SEED, entry.identity.id)))
    expected = distributed_average(models, shares, parameters.fractional_bits)
    assert np.max(np.abs(np.array(report["result"]["w"]) - expected)) <= 2**-20
    assert observed(report) == closed_form_distributed(3)
    privacy = report["privacy"]
    assert privacy["mechanism"] == "distributed-gaussian" and "skipped" in privacy["stage1"]
    assert privacy["epsilon_effective"] <= parameters.epsilon * (1 + 1e-9)


def test_a_participant_killed_mid_session_aborts_everywhere_then_a_new_session_succeeds(tmp_path):
    with deployment(tmp_path, 3, faults={3: "kill-on:Step/pathak/masked_share"}) as d:
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            d.run_pathak(session_id="doomed")
        assert raised.value.code() == grpc.StatusCode.ABORTED
        assert "aborted" in raised.value.details()
        for identity in (party(1), party(2), CURATOR):  # nothing partial is published anywhere
            with pytest.raises(grpc.RpcError) as refused:
                d.call(identity, RoleStub, "AwaitResult", envelope("doomed", identity), CLIENT)
            assert refused.value.code() == grpc.StatusCode.ABORTED
        d.restart(party(3))
        report = d.run_pathak(session_id="after")
        assert len(report["result"]["w"]) == d.pathak_parameters().dimension  # all K + 1 shares came back


class _Pathak:
    """A Pathak message for one session (the envelope is made per receiver and sender)."""

    def __init__(self, session: str, **body):
        self.session = session
        self.body = pathak_pb2.PathakMessage(**body)

    @property
    def open(self):
        return self.body.open


def test_bad_pathak_messages_are_refused(pool):
    d = pool.get(3)
    def step(target, stub, message, sender):
        return d.call(target, stub, "Step", envelope(message.session, target, sender, pathak=message.body), sender)

    open_message = _Pathak("bad-1", open=d.pathak_parameters().to_proto())

    def status(action):
        with pytest.raises(grpc.RpcError) as raised:
            action()
        return raised.value.code()

    # Only the client opens sessions; unknown sessions and empty bodies are refused.
    assert status(lambda: step(party(1), RoleStub, open_message, party(2))) == grpc.StatusCode.PERMISSION_DENIED
    unknown = _Pathak("nope", commitment=b"\x00" * 32)
    assert status(lambda: step(party(1), RoleStub, unknown, party(2))) == grpc.StatusCode.FAILED_PRECONDITION
    empty = _Pathak("bad-1")
    assert status(lambda: step(party(1), RoleStub, empty, CLIENT)) == grpc.StatusCode.INVALID_ARGUMENT
    bad_parameters = _Pathak("bad-2", open=d.pathak_parameters().to_proto())
    bad_parameters.open.dimension = 7
    assert status(lambda: step(party(1), RoleStub, bad_parameters, CLIENT)) == grpc.StatusCode.INVALID_ARGUMENT
    bad_parameters.open.dimension = 30
    bad_parameters.open.noise_seed = 1  # parties in test mode accept it; the mechanism name is wrong here
    bad_parameters.open.mechanism = "laplace"
    assert status(lambda: step(party(1), RoleStub, bad_parameters, CLIENT)) == grpc.StatusCode.INVALID_ARGUMENT
    step(party(1), RoleStub, open_message, CLIENT)
    assert status(lambda: step(party(1), RoleStub, open_message, CLIENT)) == grpc.StatusCode.FAILED_PRECONDITION
    # A replayed commitment, a reveal before its commitment, a message from the wrong role.
    commitment = _Pathak("bad-1", commitment=b"\x00" * 32)
    step(party(1), RoleStub, commitment, party(2))  # peers may start first: stored
    assert status(lambda: step(party(1), RoleStub, commitment, party(2))) == grpc.StatusCode.INVALID_ARGUMENT
    reveal = _Pathak("bad-1", reveal=pathak_pb2.Reveal(seed=b"s" * 32, nonce=b"n" * 32))
    assert status(lambda: step(party(1), RoleStub, reveal, party(3))) == grpc.StatusCode.FAILED_PRECONDITION
    assert status(lambda: step(party(1), RoleStub, reveal, party(2))) == grpc.StatusCode.INVALID_ARGUMENT
    assert status(lambda: step(party(1), RoleStub, commitment, CURATOR)) == grpc.StatusCode.PERMISSION_DENIED
    start = _Pathak("bad-1", start=common_pb2.Empty())
    assert status(lambda: step(party(1), RoleStub, start, party(2))) == grpc.StatusCode.PERMISSION_DENIED
    key = _Pathak("bad-1", masked_noise=common_pb2.Ciphertexts())
    assert status(lambda: step(CURATOR, RoleStub, key, party(1))) == grpc.StatusCode.FAILED_PRECONDITION
    # Abort the half-open session; the services keep serving.
    d.call(party(1), RoleStub, "AbortSession", common_pb2.AbortRequest(session_id="bad-1"), CLIENT)
    assert len(d.run_pathak()["result"]["w"]) == d.pathak_parameters().dimension


def test_a_party_below_n_min_refuses_and_the_session_is_aborted_everywhere(pool):
    """n_min is a promise about every party (the clamp bound and δ rely on it): a smaller party refuses at
    `open`, the client aborts the session at everyone else, and nobody keeps it open."""
    d = pool.get(3, None, "10")
    sizes = [int(s) for s in d.client_data["party_sizes"]]
    assert min(sizes) < max(sizes)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        d.run_pathak(session_id="below-n-min", n_min=max(sizes))
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION and "n_min" in refused.value.details()
    participants = [entry.identity for entry in d.topology.parties] + [CURATOR]
    for identity in participants:
        status = d.call(identity, RoleStub, "GetStatus", common_pb2.Empty(), CLIENT)
        assert "below-n-min" not in status.open_sessions, identity
