"""mpdp's threshold sum inside Flower (docs/flower.md): the workflow and mod against plain FedAvg, a hostile
server (alone and with a colluding committee member), clients and key holders dropping out, the committee's
own key generation, and a run on Flower's simulation engine. Needs the `flower` extra (flwr 1.42); without it
every test here skips and says so. Keys are 1024-bit, as in every test."""

from __future__ import annotations

import logging
import math

import pytest

pytest.importorskip("flwr", reason="needs the flower extra (flwr 1.42): pip install 'mpdp[flower]'")

import numpy as np  # noqa: E402
from flwr.app import ConfigRecord, Context, Message, RecordDict  # noqa: E402
from flwr.app.message_type import MessageType  # noqa: E402

from mpdp.cryptocore.errors import CryptoError  # noqa: E402
from mpdp.flower import demo, protocol, runner  # noqa: E402
from mpdp.flower.bundles import Bundle  # noqa: E402
from mpdp.flower.client import MpdpMod  # noqa: E402
from mpdp.flower.encoding import UpdateCodec  # noqa: E402
from mpdp.flower.measure import CountedWorkflow  # noqa: E402
from mpdp.flower.twin import RUN_ID, InProcessGrid  # noqa: E402
from mpdp.flower.workflow import MpdpWorkflow  # noqa: E402
from mpdp.proto.v1 import common_pb2, threshold_sum_pb2  # noqa: E402
from mpdp.sessions.errors import ProtocolError  # noqa: E402
from mpdp.threshold_sum.combiner import SumCombiner  # noqa: E402

CLIENTS, COMMITTEE, THRESHOLD, BITS = 10, 4, 3, 1024
# A parameter's fixed-point error is below 2^-20 per summand, divided by the total weight: far below this.
FIXED_POINT_TOLERANCE = 1e-6


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    return runner.bundles_for(tmp_path_factory.mktemp("bundles"), CLIENTS, COMMITTEE, THRESHOLD, BITS, dealt=True)


def server_context() -> Context:
    return Context(run_id=RUN_ID, node_id=0, node_config={}, state=RecordDict(), run_config={})


def twin(bundles, clients: int = CLIENTS) -> InProcessGrid:
    return InProcessGrid(demo.client_app([MpdpMod(bundles, COMMITTEE)]), clients)


def plain_fedavg(rounds: int, clients: int = CLIENTS) -> list[np.ndarray]:
    return demo.run(InProcessGrid(demo.client_app(), clients), server_context(), rounds, clients)


def assert_models_close(got, expected):
    for a, b in zip(got, expected, strict=True):
        assert np.max(np.abs(a - b)) < FIXED_POINT_TOLERANCE


def test_three_rounds_of_ten_clients_give_plain_fedavgs_model(bundles):
    workflow = MpdpWorkflow(COMMITTEE, THRESHOLD)
    got = demo.run(twin(bundles), server_context(), 3, CLIENTS, workflow)
    assert_models_close(got, plain_fedavg(3))
    assert [r.contributors for r in workflow.log.rounds] == [list(range(1, CLIENTS + 1))] * 3
    assert all(len(r.decryptors) == THRESHOLD and not r.rejected_holders for r in workflow.log.rounds)
    assert np.any(np.abs(got[0]) > 0.1)  # the model moved: a zero model would match a zero model


def _train_round(bundles, grid: InProcessGrid, round_: int = 1):
    """Run the train stage as the workflow does; the signed contributions by party, and the round's terms."""
    terms = protocol.RoundTerms(str(RUN_ID), round_, demo.FEATURES + 1, CLIENTS, 3, 8.0, 1000.0, 20)
    from flwr.common import FitIns, ndarrays_to_parameters
    from flwr.compat.common import recorddict_compat as compat

    messages = []
    for node in grid.get_node_ids():
        content = compat.fitins_to_recorddict(FitIns(ndarrays_to_parameters(demo.initial_parameters()), {}), True)
        content.config_records[protocol.RECORD] = ConfigRecord({"stage": protocol.TRAIN, "terms": terms.to_json()})
        messages.append(Message(content=content, dst_node_id=node, message_type=MessageType.TRAIN))
    contributions = {}
    for reply in grid.send_and_receive(messages):
        record = reply.content.config_records[protocol.RECORD]
        contributions[int(record["party"])] = threshold_sum_pb2.Contribution(
            sender=int(record["party"]), ciphertexts=common_pb2.Ciphertexts.FromString(bytes(record["ciphertexts"])),
            signature=threshold_sum_pb2.ContributionSignature.FromString(bytes(record["signature"])))
    return contributions, terms


def _ask_holders(grid: InProcessGrid, terms, contributions) -> dict[int, Message]:
    return _ask_holders_of(grid, terms, contributions, COMMITTEE)


def _ask_holders_of(grid: InProcessGrid, terms, contributions, committee: int) -> dict[int, Message]:
    request = threshold_sum_pb2.DecryptionRequest(contributions=contributions)
    messages = [Message(content=RecordDict({protocol.RECORD: ConfigRecord({
        "stage": protocol.DECRYPT, "terms": terms.to_json(), "request": request.SerializeToString()})}),
        dst_node_id=party, message_type=MessageType.TRAIN) for party in range(1, committee + 1)]
    return {r.metadata.src_node_id: r for r in grid.send_and_receive(messages)}


def test_a_hostile_server_alone_or_with_one_colluding_holder_decrypts_no_single_update(bundles):
    grid = twin(bundles)
    contributions, terms = _train_round(bundles, grid)
    victim, colluder = 7, 1  # the colluder is a committee member: it hands the server its key share
    public = Bundle.load(bundles, colluder).public_key()
    colluder_share = Bundle.load(bundles, colluder).key_share()
    assert public is not None and colluder_share is not None

    # The victim's upload alone, then with the colluder's (whose own update the server would subtract): every
    # honest holder refuses, whatever minimum the server's terms name.
    for subset in ([victim], [victim, colluder]):
        loose = protocol.RoundTerms(**{**terms.__dict__, "min_contributors": 1})
        for asked in (terms, loose):
            answers = _ask_holders(grid, asked, [contributions[p] for p in subset])
            assert all(answer.has_error() for answer in answers.values()), subset
            assert all("insufficient noise" in answer.error.reason or "not authenticated" in answer.error.reason
                       for answer in answers.values())

    # An upload the server made up in the victim's name (its own ciphertexts, the victim's old signature) is refused.
    forged = threshold_sum_pb2.Contribution()
    forged.CopyFrom(contributions[victim])
    forged.ciphertexts.values[0] = contributions[2].ciphertexts.values[0]
    answers = _ask_holders(grid, terms, [forged, contributions[2], contributions[3]])
    assert all(a.has_error() and "not authenticated" in a.error.reason for a in answers.values())

    # The round's full sum is decrypted once; a second subset (everyone but the victim, whose difference from
    # the full sum is the victim's update) is refused by every honest holder.
    full = [contributions[p] for p in sorted(contributions)]
    assert not any(a.has_error() for a in _ask_holders(grid, terms, full).values())
    answers = _ask_holders(grid, terms, [c for c in full if c.sender != victim])
    assert all(answer.has_error() and "already decrypted" in answer.error.reason for answer in answers.values())

    # What the server then holds for the victim's ciphertexts alone: the colluder's share, below the threshold.
    codec = UpdateCodec(terms.count, terms.summands, public.n)
    victim_ciphertexts = [int.from_bytes(v, "big") for v in contributions[victim].ciphertexts.values]
    assert len(victim_ciphertexts) == codec.ciphertext_count
    combiner = SumCombiner(public, list(range(1, COMMITTEE + 1)), victim_ciphertexts, terms.proof_context())
    from mpdp.threshold_sum.decryption import partial_decryptions

    combiner.accept(colluder, partial_decryptions(colluder_share, victim_ciphertexts, terms.proof_context()))
    with pytest.raises(ProtocolError, match="insufficient|partial decryptions|shares"):
        combiner.combine()


def test_clients_dropping_before_upload_up_to_the_threshold_leave_the_round_completing(bundles):
    grid = twin(bundles)
    gone = {5, 8, COMMITTEE}  # two clients, and a key holder (ℓ − t = 1 may be missing)
    grid.drop = lambda node, stage: node in gone and stage in (protocol.TRAIN, protocol.DECRYPT)
    workflow = MpdpWorkflow(COMMITTEE, THRESHOLD)
    got = demo.run(grid, server_context(), 1, CLIENTS, workflow)
    outcome = workflow.log.rounds[0]
    assert outcome.contributors == [p for p in range(1, CLIENTS + 1) if p not in gone]
    assert sorted(outcome.absent) == sorted(gone)
    assert outcome.decryptors == [1, 2, 3]
    rows = [demo.partition(p - 1, CLIENTS) for p in outcome.contributors]
    updates = [demo.train(demo.initial_parameters(), x, y) for x, y in rows]
    weights = [len(y) for _, y in rows]
    expected = [np.average([u[i] for u in updates], axis=0, weights=weights) for i in range(2)]
    assert_models_close(got, expected)


def test_one_more_holder_missing_than_the_threshold_allows_stops_the_round(bundles):
    grid = twin(bundles)
    grid.drop = lambda node, stage: node in (3, 4) and stage == protocol.DECRYPT
    with pytest.raises(ProtocolError, match="shares|partial decryptions"):
        demo.run(grid, server_context(), 1, CLIENTS, MpdpWorkflow(COMMITTEE, THRESHOLD))


def test_a_holders_forged_partial_decryption_is_rejected_before_combining(bundles):
    grid = twin(bundles)
    send = grid.send_and_receive

    def tampering(messages, *, timeout=None):
        replies = send(messages, timeout=timeout)
        for reply in replies:
            record = reply.content.config_records.get(protocol.RECORD)
            if record is not None and "partials" in record and reply.metadata.src_node_id == 2:
                partials = threshold_sum_pb2.PartialDecryptions.FromString(bytes(record["partials"]))
                partials.values[0] = (int.from_bytes(partials.values[0], "big") + 1).to_bytes(len(partials.values[0]), "big")
                record["partials"] = partials.SerializeToString()
        return replies

    grid.send_and_receive = tampering  # type: ignore[method-assign]
    workflow = MpdpWorkflow(COMMITTEE, THRESHOLD)
    got = demo.run(grid, server_context(), 1, CLIENTS, workflow)
    outcome = workflow.log.rounds[0]
    assert list(outcome.rejected_holders) == [2] and outcome.decryptors == [1, 3, 4]
    assert_models_close(got, plain_fedavg(1))


@pytest.mark.slow
def test_the_committee_generates_the_key_over_flower_messages(tmp_path):
    """No dealer: three members (all three needed: 2t > ℓ + 1) run mpdp's key generation through the server,
    which relays sealed messages."""
    from mpdp.flower import bundles as provisioning

    provisioning.provision(tmp_path, 6)
    grid = InProcessGrid(demo.client_app([MpdpMod(tmp_path, 3)]), 6)
    workflow = MpdpWorkflow(3, 3, keygen="dkg", key_bits=BITS)
    got = demo.run(grid, server_context(), 2, 6, workflow)
    assert_models_close(got, plain_fedavg(2, 6))
    assert workflow.log.keygen_round_trips > 10
    assert workflow.public_key is not None and workflow.public_key.n.bit_length() == BITS
    sent = b"".join(bytes(v) for m in grid.sent if protocol.RECORD in m.content.config_records
                    for v in m.content.config_records[protocol.RECORD].get("inbox", []))
    assert sent  # the server relayed the members' private messages, sealed: no share is in them in the clear
    shares = [MpdpMod._state(grid.contexts[p])["share"] for p in (1, 2, 3)]
    assert all(s not in sent.decode("latin-1") for s in shares)


@pytest.mark.slow
def test_ten_clients_on_flowers_simulation_engine_give_plain_fedavgs_model(bundles):
    workflow = CountedWorkflow(MpdpWorkflow(COMMITTEE, THRESHOLD))
    got = runner.simulate(CLIENTS, 3, workflow, [MpdpMod(bundles, COMMITTEE)])
    assert_models_close(got, plain_fedavg(3))
    assert workflow.grid is not None
    assert [c["round_trips"] for c in workflow.grid.report()] == [1, 2, 2, 2]  # setup once, then two per round


def test_a_threshold_that_lets_two_quorums_share_only_the_colluder_is_refused(tmp_path):
    """t = 2 of 3: {colluder, A} and {colluder, B} could each decrypt another subset of one round."""
    from mpdp.threshold_sum.quorums import QuorumError

    with pytest.raises(QuorumError):
        MpdpWorkflow(3, 2)
    runner.bundles_for(tmp_path, 4, 3, 2, BITS, dealt=True)
    grid = InProcessGrid(demo.client_app([MpdpMod(tmp_path, 3)]), 4)
    terms = protocol.RoundTerms(str(RUN_ID), 1, demo.FEATURES + 1, 4, 3, 8.0, 1000.0, 20)
    answers = _ask_holders_of(grid, terms, [], 3)
    assert all(a.has_error() and "QuorumError" in a.error.reason for a in answers.values())


def test_an_update_beyond_its_bounds_is_refused_not_wrapped():
    codec = UpdateCodec(3, 10, (1 << 1023) + 1)
    with pytest.raises(CryptoError):
        codec.encode(np.array([0.0, 9.0, 0.0]), 10)
    with pytest.raises(CryptoError):
        codec.encode(np.zeros(3), 5000)


def test_noise_shares_give_dp_fedavgs_model_within_the_noise_and_the_run_log_states_epsilon(bundles, caplog):
    from mpdp.flower.noise import NoiseShares, clip
    from mpdp.privacy.composition import Guarantee

    noise = NoiseShares(noise_multiplier=1.0, l2_clip=1.0, delta=1e-5)
    workflow = MpdpWorkflow(COMMITTEE, THRESHOLD, noise=noise)
    with caplog.at_level(logging.INFO, logger="mpdp.flower"):
        got = demo.run(twin(bundles), server_context(), 2, CLIENTS, workflow)
    first, second = workflow.log.rounds
    assert first.epsilon is not None and second.epsilon_so_far is not None
    assert first.epsilon == pytest.approx(first.epsilon_so_far) and second.epsilon_so_far > second.epsilon > 0
    # The run's mpdp Guarantee: its ε is the one logged, its δ (truncation included) within the run's.
    run = Guarantee.from_json(second.guarantee)
    assert run.epsilon == second.epsilon_so_far and 0 < run.extra_delta and run.delta == second.delta_so_far <= 1e-5
    logged = [r.getMessage() for r in caplog.records if "over the run" in r.getMessage()]
    assert len(logged) == 2 and f"ε = {second.epsilon_so_far:.4g} over the run's 2 rounds" in logged[1]
    # Round 1 from the zero model: the noiseless DP-FedAvg step is the mean clipped delta. Each of the K shares
    # has variance μ/(τ − c) (any decryptable sum without the colluder's share carries μ), so the mean's noise per
    # coordinate has σ = √(K·share_μ)/(2^F·K): 6σ bounds the difference but for a chance below 10⁻⁷.
    deltas = [clip(np.concatenate(demo.train(demo.initial_parameters(), *demo.partition(i, CLIENTS))), 1.0)
              for i in range(CLIENTS)]
    noiseless = np.mean(deltas, axis=0)
    sigma = math.sqrt(CLIENTS * noise.share_mu(demo.FEATURES + 1, 20, 3)) / 2**20 / CLIENTS
    single = demo.run(twin(bundles), server_context(), 1, CLIENTS, MpdpWorkflow(COMMITTEE, THRESHOLD, noise=noise))
    difference = np.concatenate(single) - noiseless
    assert np.max(np.abs(difference)) < 6 * sigma
    assert np.max(np.abs(difference)) > 1e-4  # the noise is there: without it the error is 2^-20
    assert np.all(np.isfinite(np.concatenate(got)))


def test_a_noisy_round_beyond_what_the_shares_truncation_was_sized_for_is_refused_before_clients_train(bundles):
    from mpdp.flower.noise import NoiseBudgetExhausted, NoiseShares

    workflow = MpdpWorkflow(COMMITTEE, THRESHOLD, noise=NoiseShares(noise_multiplier=1.0, l2_clip=1.0, max_rounds=1))
    with pytest.raises(NoiseBudgetExhausted, match="sized for 1 rounds"):
        demo.run(twin(bundles), server_context(), 2, CLIENTS, workflow)
    assert len(workflow.log.rounds) == 1
