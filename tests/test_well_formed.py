"""What a key holder checks before it decrypts proven votes or verifiable noise (mpdp/vote_proofs/well_formed.py),
in process (DPPP, and Hamm's voters likewise): DPPP rounds between the real aggregator side and teacher sides with signed contributions, where the
aggregator colludes with teacher 2 — it takes a ballot whose one-hot proof fails, commitments whose bit proofs
fail, or a flipped contribution folded without the coin. Every holder refuses, naming teacher 2, and releases
nothing; the honest rounds decrypt."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from aggregator.dppp import DpppAggregatorSide
from launcher.deployment import certs
from mpdp.cryptocore.keys.contribution_signature import ContributionSigner, ContributionVerifier
from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.sessions.errors import Kind, ProtocolError
from mpdp.sessions.identity import AGGREGATOR, CLIENT, Identity, party
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.threshold_sum.binding import ContributionKeys
from mpdp.vote_proofs import joint_coin, noise_bits, well_formed
from mpdp.vote_proofs import votes as vote_proofs
from mpdp.vote_proofs.assurance import Assurance
from party.dppp import DpppTeacherSide
from party.key_holder import signed
from party.resources import PartyResources
from party.voter import State
from tests.malicious_parties import tampered_bit

TEACHERS = (1, 2, 3)
ACCOMPLICE = 2
QUERIES, CLASSES = 2, 2
FEATURES = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.2], [0.1, 0.9]])


@pytest.fixture(scope="module")
def issued(tmp_path_factory):
    directory = tmp_path_factory.mktemp("certs")
    certs.issue(directory, [*(party(i) for i in TEACHERS), AGGREGATOR])
    return directory


def _keys(directory, identity: Identity) -> ContributionKeys:
    cert, key = certs.certificate_files(directory, identity)
    return ContributionKeys(ContributionVerifier.from_file(directory / certs.CA_FILE),
                            lambda name, sender: name == f"party/{sender}", ContributionSigner.from_files(key, cert))


class Round:
    """One in-process DPPP round: every message between the aggregator side and the teacher sides is delivered,
    except the decryption request, which the test holds."""

    def __init__(self, threshold_key, issued, verifiable: bool, faults: dict[int, str] | None = None,
                 check_bits: bool = False):
        public, shares = threshold_key
        self.parameters = DpppParameters.with_minimal_noise(10.0, 1e-5, QUERIES, CLASSES, len(TEACHERS), 2 / 3, True,
                                                            public.key_id, assurance=Assurance.HOLDERS_CHECK_BITS if check_bits else Assurance.VERIFIABLE_NOISE if verifiable else Assurance.PROVEN_VOTES)
        self.parameters.calibrate()
        model = LogisticRegression().fit(FEATURES, [0, 1, 1, 0])
        faults = faults or {}
        own = {i: PartyResources(i, public, shares[i - 1], model, FEATURES, np.array([0, 1, 1, 0]), test_mode=True,
                                 fault=faults.get(i), contribution_keys=_keys(issued, party(i))) for i in TEACHERS}
        self.teachers = {i: own[i].side(DpppTeacherSide)("s", own[i], self.parameters, FEATURES[:QUERIES], 60.0)
                         for i in TEACHERS}
        self.aggregator = DpppAggregatorSide("s", self.parameters, matrix_to_proto(FEATURES[:QUERIES]), 60.0, public,
                                             list(TEACHERS), list(TEACHERS), keys=_keys(issued, AGGREGATOR))
        self.aggregator.receive(CLIENT, "open", None)
        self.public = public
        self.request: threshold_sum_pb2.DecryptionRequest | None = None

    def deliver(self, outbound) -> None:
        queue = list(outbound)
        while queue:
            message = queue.pop(0)
            if message.kind == "decryption_request":
                self.request = message.body
                continue
            if message.to == AGGREGATOR:
                raise AssertionError("sent by a teacher: delivered by `from_teacher`")
            for answer in self.teachers[message.to.id].receive(AGGREGATOR, message.kind, message.body):
                queue.extend(self.aggregator.receive(message.to, answer.kind, answer.body))

    def votes(self, teacher: int):
        return self.teachers[teacher].cast_votes()

    def decrypt(self, holder: int):
        assert self.request is not None
        return self.teachers[holder].receive(AGGREGATOR, "decryption_request", self.request)


def _refused_by_every_holder(round_: Round, reason: str) -> None:
    for holder in TEACHERS:
        with pytest.raises(ProtocolError) as raised:
            round_.decrypt(holder)
        assert raised.value.kind is Kind.ABORTED and f"party {ACCOMPLICE}" in str(raised.value)
        assert reason in str(raised.value)
        assert round_.teachers[holder].state is State.ABORTED


def test_honest_proven_and_verifiable_rounds_decrypt(threshold_key, issued):
    for verifiable in (False, True):
        round_ = Round(threshold_key, issued, verifiable)
        for teacher in TEACHERS:
            round_.deliver(round_.aggregator.receive(party(teacher), "votes", round_.votes(teacher)))
        assert round_.request is not None
        assert all(c.HasField("well_formed") for c in round_.request.contributions)
        for holder in TEACHERS:
            (answer,) = round_.decrypt(holder)
            assert answer.kind == "partial_decryptions"


def test_a_ballot_whose_proof_the_aggregator_skipped_is_refused(threshold_key, issued):
    """Teacher 2's ballot has a second 1 in query 0 (in the feasible range); the aggregator folds it unchecked."""
    round_ = Round(threshold_key, issued, False, {ACCOMPLICE: "vote-two-ones"})
    for teacher in TEACHERS:
        body = round_.votes(teacher)
        if teacher == ACCOMPLICE:  # the colluding aggregator's step 2: no proof checked
            p = round_.parameters
            folded = vote_proofs.folded(round_.public, p.layout(round_.public.n), p.queries, p.classes, p.share_range,
                                        body.votes, body.proven)
            round_.aggregator.collector.accept(teacher, folded, body.signature,
                                               well_formed.of_proven(body.votes, body.proven))
            continue
        round_.deliver(round_.aggregator.receive(party(teacher), "votes", body))
    assert [c.sender for c in round_.request.contributions] == list(TEACHERS)
    _refused_by_every_holder(round_, "proofs fail")


def test_the_same_ballot_without_its_proofs_is_refused_and_changes_nothing(threshold_key, issued):
    round_ = Round(threshold_key, issued, False)
    for teacher in TEACHERS:
        round_.deliver(round_.aggregator.receive(party(teacher), "votes", round_.votes(teacher)))
    bare = threshold_sum_pb2.DecryptionRequest()
    bare.CopyFrom(round_.request)
    bare.contributions[1].ClearField("well_formed")
    with pytest.raises(ProtocolError) as raised:
        round_.teachers[1].receive(AGGREGATOR, "decryption_request", bare)
    assert raised.value.kind is Kind.INVALID_ARGUMENT and "without its proofs" in str(raised.value)
    assert round_.teachers[1].state is State.VOTED  # nothing changed: the true request still decrypts
    (answer,) = round_.decrypt(1)
    assert answer.kind == "partial_decryptions"


def _commit_all(round_: Round, skip_checks_of: int | None = None) -> None:
    """Step 2 with verifiable noise; the aggregator takes `skip_checks_of`'s commitments without any proof."""
    outbound = []
    for teacher in TEACHERS:
        body = round_.votes(teacher)
        if teacher == skip_checks_of:
            agg = round_.aggregator
            votes = [int.from_bytes(v, "big") for v in body.proven.ciphertexts.values]
            bits = [int.from_bytes(v, "big") for v in body.noise_bits.ciphertexts.values]
            digest = noise_bits.commitment_digest(round_.public, votes, bits)
            agg.committed[teacher] = (votes, bits, joint_coin.Entry(teacher, digest, bytes(body.coin_commitment)))
            agg.evidence[teacher] = well_formed.of_commitments(body.proven, body.noise_bits, body.signature,
                                                                  round_.parameters.holders_check_bits)
            continue
        outbound = round_.aggregator.receive(party(teacher), "votes", body)
    round_.deliver(outbound)


def test_commitments_whose_bit_proofs_the_aggregator_skipped_are_refused_where_the_holders_check_bits(threshold_key,
                                                                                                         issued):
    round_ = Round(threshold_key, issued, True, {ACCOMPLICE: "noise-bit-bad"}, check_bits=True)
    _commit_all(round_, skip_checks_of=ACCOMPLICE)
    assert [c.sender for c in round_.request.contributions] == list(TEACHERS)
    assert all(len(c.well_formed.noise_bits.proofs) == len(c.well_formed.noise_bits.ciphertexts.values)
               for c in round_.request.contributions)
    _refused_by_every_holder(round_, "proofs fail")


def test_without_holders_check_bits_the_bits_proofs_stay_with_the_aggregator(threshold_key, issued):
    """What the report states for that mode: the request carries the bits without their proofs, and a non-bit the
    aggregator let through is decrypted; an honest aggregator still excludes the teacher by name."""
    round_ = Round(threshold_key, issued, True, {ACCOMPLICE: "noise-bit-bad"})
    _commit_all(round_, skip_checks_of=ACCOMPLICE)
    assert not any(c.well_formed.noise_bits.proofs for c in round_.request.contributions)
    (answer,) = round_.decrypt(1)
    assert answer.kind == "partial_decryptions"
    honest = Round(threshold_key, issued, True, {ACCOMPLICE: "noise-bit-bad"})
    _commit_all(honest)
    assert "noise bit proof failed" in honest.aggregator.rejected_votes[ACCOMPLICE]


def test_an_unflipped_contribution_the_aggregator_accepted_is_refused(threshold_key, issued):
    """Teacher 2 signs its bits folded as committed, not as the coin flips them; the aggregator takes that fold."""
    round_ = Round(threshold_key, issued, True)
    agg = round_.aggregator
    original_flip = agg._flip

    def colluding_flip():
        outbound = original_flip()
        p = round_.parameters
        votes, bits, _ = agg.committed[ACCOMPLICE]
        unflipped = noise_bits.fold(round_.public, p.layout(round_.public.n), p.queries, p.classes, p.share_range,
                                    votes, bits, np.zeros(len(bits), dtype=np.int64))
        agg.flipped[ACCOMPLICE] = unflipped
        accomplice = round_.teachers[ACCOMPLICE]
        signature = signed(accomplice.own, accomplice.slot, round_.public.key_id, list(unflipped.values))
        accomplice.sign_flipped = lambda body: threshold_sum_pb2.FlippedContribution(signature=signature)
        accomplice._advance(State.REVEALED, State.VOTED, "signing what the aggregator asks")
        return outbound

    agg._flip = colluding_flip
    _commit_all(round_)
    assert [c.sender for c in round_.request.contributions] == list(TEACHERS)
    _refused_by_every_holder(round_, "as the joint coin flips them")


def test_a_coin_share_replaced_after_the_reveals_is_refused(threshold_key, issued):
    """The aggregator hands the holders another share of teacher 3's than the one that opened its commitment."""
    round_ = Round(threshold_key, issued, True)
    _commit_all(round_)
    round_.request.coin_shares.shares[2].share = joint_coin.draw_share()
    for holder in TEACHERS:
        with pytest.raises(ProtocolError) as raised:
            round_.decrypt(holder)
        assert raised.value.kind is Kind.ABORTED and "party 3's coin share does not open" in str(raised.value)


def test_a_session_whose_holder_request_would_not_fit_one_message_is_refused_at_the_start(threshold_key):
    """At 1024 bits a committed bit with its proof is about 1 kB: 10 voters of 1 600 bits fit, of 16 000 do not."""
    public, _ = threshold_key
    well_formed.check_size(public, 10, 20, 10, 1_600, True)
    well_formed.check_size(public, 10, 200, 10, 16_000, False)  # ciphertexts alone: about 256 bytes each
    with pytest.raises(ProtocolError) as raised:
        well_formed.check_size(public, 10, 200, 10, 16_000, True)
    assert raised.value.kind is Kind.INVALID_ARGUMENT and "label fewer queries" in str(raised.value)


def _pooled_round(threshold_key, issued, tampered: int | None) -> Round:
    """Every teacher's pool holds two uploads, the round's bits spanning both (the second from its middle on, its
    proofs' indices offset); `tampered`'s first upload has a bit of 3, which the colluding aggregator let in."""
    from mpdp.vote_proofs import noise_pool
    from mpdp.vote_proofs.noise_pool import NoisePool, Pools

    round_ = Round(threshold_key, issued, True, check_bits=True)
    pools = Pools()
    round_.aggregator.pools = pools
    count = round_.parameters.values * round_.parameters.share_range
    half, skipped = count // 2, 3
    rng = np.random.default_rng(0)
    for teacher, side in round_.teachers.items():
        side.noise_pool = NoisePool()
        for first, size in ((0, half), (half, count - half + skipped)):
            bits = rng.integers(0, 2, size)
            proven, values = noise_bits.commit(round_.public, bits, noise_pool.context(round_.public.key_id, teacher,
                                                                                         first))
            if teacher == tampered and first == 0:
                proven = tampered_bit(round_.public, proven)
                values = [int.from_bytes(v, "big") for v in proven.ciphertexts.values]
            side.noise_pool.append(first, values, bits=[int(b) for b in bits])
            pools.of(teacher).append(first, values, proofs=list(proven.proofs))
    return round_


def test_pooled_bits_carry_their_uploads_proofs_to_the_holders(threshold_key, issued):
    round_ = _pooled_round(threshold_key, issued, None)
    _commit_all(round_)
    assert all(len(set(c.well_formed.pool_uploads)) == 2 for c in round_.request.contributions)
    for holder in TEACHERS:
        (answer,) = round_.decrypt(holder)
        assert answer.kind == "partial_decryptions"


def test_a_pooled_non_bit_the_aggregator_let_in_is_refused_where_the_holders_check_bits(threshold_key, issued):
    round_ = _pooled_round(threshold_key, issued, ACCOMPLICE)
    _commit_all(round_)
    assert [c.sender for c in round_.request.contributions] == list(TEACHERS)
    _refused_by_every_holder(round_, "proofs fail")


# ---------------------------------------------------------------------------------------------- Hamm

def _hamm_round(threshold_key, issued, verifiable: bool, faults: dict[int, str]):
    """Hamm's aggregator and voter sides (noisy counts, binary votes on 4 points, signed contributions)."""
    from aggregator.hamm import HammAggregatorSide
    from mpdp.proto.v1 import hamm_pb2
    from mpdp.protocols.hamm.parameters import HammParameters
    from party.hamm import HammPartySide

    public, shares = threshold_key
    parameters = HammParameters("vote", 10.0, 1e-5, 0.01, 2, len(TEACHERS), len(FEATURES), 2, True, False, 2 / 3,
                                public.key_id, assurance=Assurance.VERIFIABLE_NOISE if verifiable else Assurance.PROVEN_VOTES)
    parameters.calibrate()
    model = LogisticRegression().fit(FEATURES, [0, 1, 1, 0])
    own = {i: PartyResources(i, public, shares[i - 1], model, FEATURES, np.array([0, 1, 1, 0]), test_mode=True,
                             fault=faults.get(i), contribution_keys=_keys(issued, party(i))) for i in TEACHERS}
    voters = {i: own[i].side(HammPartySide)("h", own[i], parameters, FEATURES, 60.0) for i in TEACHERS}
    queries = hamm_pb2.HammQueries(parameters=parameters.to_proto(), features=matrix_to_proto(FEATURES),
                                   deadline_seconds=60)
    aggregator = HammAggregatorSide("h", parameters, queries, public, list(TEACHERS), list(TEACHERS),
                                    _keys(issued, AGGREGATOR))
    return parameters, voters, aggregator


def _hamm_deliver(voters, aggregator, outbound) -> threshold_sum_pb2.DecryptionRequest | None:
    request = None
    queue = list(outbound)
    while queue:
        message = queue.pop(0)
        if message.kind == "decryption_request":
            request = message.body
        elif message.to.role == "party":
            for answer in voters[message.to.id].receive(AGGREGATOR, message.kind, message.body):
                queue.extend(aggregator.receive(message.to, answer.kind, answer.body))
    return request


def test_hamm_a_ballot_whose_proof_the_aggregator_skipped_is_refused(threshold_key, issued):
    parameters, voters, aggregator = _hamm_round(threshold_key, issued, False, {ACCOMPLICE: "vote-two-ones"})
    public = threshold_key[0]
    outbound = []
    for number, side in voters.items():
        body = side.cast_votes()
        if number == ACCOMPLICE:
            folded = vote_proofs.folded(public, parameters.layout(public.n), parameters.aux_points,
                                        parameters.vote_width, parameters.share_range, body.votes, body.proven)
            aggregator.collector.accept(number, folded, body.signature, well_formed.of_proven(body.votes, body.proven))
            continue
        outbound += aggregator.receive(party(number), "votes", body)
    request = _hamm_deliver(voters, aggregator, outbound)
    assert request is not None and [c.sender for c in request.contributions] == list(TEACHERS)
    for holder in TEACHERS:
        with pytest.raises(ProtocolError) as raised:
            voters[holder].receive(AGGREGATOR, "decryption_request", request)
        assert raised.value.kind is Kind.ABORTED and f"party {ACCOMPLICE}" in str(raised.value)


def test_hamm_an_unflipped_contribution_the_aggregator_accepted_is_refused(threshold_key, issued):
    parameters, voters, aggregator = _hamm_round(threshold_key, issued, True, {ACCOMPLICE: "sign-unflipped"})
    original_flip = aggregator._flip

    def colluding_flip():  # the accomplice's fold as it signed it: its bits as committed
        outbound = original_flip()
        public = threshold_key[0]
        votes, bits, _ = aggregator.committed[ACCOMPLICE]
        aggregator.flipped[ACCOMPLICE] = noise_bits.fold(public, parameters.layout(public.n), parameters.aux_points,
                                                         parameters.vote_width, parameters.share_range, votes, bits,
                                                         np.zeros(len(bits), dtype=np.int64))
        return outbound

    aggregator._flip = colluding_flip
    outbound = []
    for number, side in voters.items():
        outbound = aggregator.receive(party(number), "votes", side.cast_votes()) or outbound
    request = _hamm_deliver(voters, aggregator, outbound)
    assert request is not None and [c.sender for c in request.contributions] == list(TEACHERS)
    for holder in TEACHERS:
        with pytest.raises(ProtocolError) as raised:
            voters[holder].receive(AGGREGATOR, "decryption_request", request)
        assert raised.value.kind is Kind.ABORTED and "as the joint coin flips them" in str(raised.value)
