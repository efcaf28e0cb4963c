"""Bound decryption (crypto.md): a key holder decrypts only the product of at least ⌈τK⌉ contributions that
their senders signed for this protocol, this session and this slot, each once, and one such sum per slot.

The attacks run over real processes against an active aggregator (tests/hostile_aggregator.py) that holds
the aggregator's certificate and every ciphertext the parties sent it."""

from __future__ import annotations

import grpc
import numpy as np
import pytest

from launcher.deployment import certs
from launcher.protocols.hamm.client import session_parameters
from mpdp.cryptocore.keys.contribution_signature import BadSignature, ContributionSigner, ContributionVerifier
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier import keyfiles
from mpdp.privacy.binomial import minimal_tosses
from mpdp.privacy.composition import Guarantee
from mpdp.privacy.ledger import UNLIMITED, Ledger, provision
from mpdp.proto.v1 import common_pb2, dppp_pb2, hamm_pb2, threshold_sum_pb2
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.protocols.hamm.parameters import HammParameters
from mpdp.sessions.errors import Kind, ProtocolError
from mpdp.sessions.identity import AGGREGATOR, Identity, party
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot
from mpdp.threshold_sum.codec import ciphertexts_from_proto, ciphertexts_to_proto
from party.resources import PartyResources
from tests.deployment import deployment
from tests.hostile_aggregator import HostileAggregator

K = 5  # τ = 2/3: ⌈τK⌉ = 4 contributions needed; t = 4 of 5 holders
HOLDER = 1


def _dppp_queries(topology, client_data, queries: int) -> dppp_pb2.DpppQueries:
    key_id = keyfiles.load_public_key(topology.public_key).key_id
    parameters = dppp_pb2.DpppParameters(epsilon=5.0, delta=1e-5, queries=queries, classes=2, teachers=K,
                                         honest_fraction=2 / 3, packed=True, key_id=key_id,
                                         total_tosses=minimal_tosses(5.0, 1e-5, queries), noise="binomial")
    features = client_data["public_features"][:queries]
    return dppp_pb2.DpppQueries(parameters=parameters, features=matrix_to_proto(features), deadline_seconds=60)


def _ciphertext_count(parameters, n: int) -> int:
    parameters.calibrate()
    return parameters.layout(n).plaintexts_needed(parameters.values)


class Attack:
    """One deployment, its aggregator replaced by a hostile one that ran two DPPP sessions and one Hamm session
    up to the votes: `earlier` and `target` (DPPP), `hamm` (Hamm)."""

    def __init__(self, tmp_path):
        self._deployment = deployment(tmp_path, K)
        self.d = self._deployment.__enter__()
        self.closed = True
        try:
            self._start()
        except BaseException:
            self.down()
            raise

    def _start(self) -> None:
        topology, data = self.d.topology, self.d.client_data
        self.public = keyfiles.load_public_key(topology.public_key)
        hamm = session_parameters(topology, data, "soft", 1.0, 1e-5, 0.01)
        count = _ciphertext_count(HammParameters.from_proto(hamm.to_proto()), self.public.n)
        # As many DPPP queries as give the same number of ciphertexts: only the binding can tell them apart.
        queries = next(q for q in range(1, 400) if _ciphertext_count(
            DpppParameters.from_proto(_dppp_queries(topology, data, q).parameters), self.public.n) == count)
        self.dppp_queries = _dppp_queries(topology, data, queries)
        self.hostile = HostileAggregator(self.d).__enter__()
        self.closed = False
        everyone = list(range(1, K + 1))
        self.earlier = self.hostile.open("earlier", "dppp", self.dppp_queries, everyone)
        self.hamm = self.hostile.open("hamm", "hamm", hamm_pb2.HammQueries(
            parameters=hamm.to_proto(), features=matrix_to_proto(data["public_features"]), deadline_seconds=60),
            everyone)
        self.target = self.hostile.open("target", "dppp", self.dppp_queries, everyone)

    def ask(self, contributions: list[threshold_sum_pb2.Contribution], session_id: str = "target",
            holder: int = HOLDER) -> grpc.StatusCode:
        """Ask a holder to decrypt; its status (OK if it accepted)."""
        request = threshold_sum_pb2.DecryptionRequest(contributions=contributions)
        try:
            self.hostile.step(party(holder), session_id, dppp=dppp_pb2.DpppMessage(decryption_request=request))
        except grpc.RpcError as error:
            return error.code()
        return grpc.StatusCode.OK

    def released(self, session_id: str = "target") -> dict[int, int]:
        """How many partial decryptions each holder sent in the session, counted once every holder's later
        message has arrived (HostileAggregator.heard_after): anything sent before it is there."""
        self.hostile.heard_after(_dppp_queries(self.d.topology, self.d.client_data, 1), list(range(1, K + 1)),
                                 list(range(1, K + 1)))
        return self.hostile.counts(session_id, "partial_decryptions")

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.hostile.__exit__(None, None, None)

    def down(self) -> None:
        try:
            self.close()
        finally:
            self._deployment.__exit__(None, None, None)


def contribution(sender: int, votes, signature=None) -> threshold_sum_pb2.Contribution:
    return threshold_sum_pb2.Contribution(sender=sender, ciphertexts=votes.votes,
                                          signature=votes.signature if signature is None else signature)


@pytest.fixture(scope="module")
def attack(tmp_path_factory):
    attack = Attack(tmp_path_factory.mktemp("bound"))
    yield attack
    attack.down()


def _refused(attack, contributions, *codes: grpc.StatusCode) -> None:
    assert attack.ask(contributions) in codes
    assert attack.released() == {}


@pytest.mark.network
def test_a_hamm_partys_votes_replayed_into_a_dppp_request_are_refused(attack):
    replayed = [contribution(1, attack.hamm[1])] + [contribution(i, attack.target[i]) for i in (2, 3, 4)]
    _refused(attack, replayed, grpc.StatusCode.PERMISSION_DENIED)


@pytest.mark.network
def test_a_single_contribution_is_never_decrypted(attack):
    _refused(attack, [contribution(1, attack.target[1])], grpc.StatusCode.FAILED_PRECONDITION)
    # Padded with the aggregator's own encryptions of 0, unsigned, to look like four contributors.
    zeros = common_pb2.Ciphertexts(key_id=attack.public.key_id, values=[
        ct.to_bytes(attack.public.paillier, attack.public.encryptor.encrypt(0)) for _ in attack.target[1].votes.values])
    padded = [contribution(1, attack.target[1])] + [
        threshold_sum_pb2.Contribution(sender=i, ciphertexts=zeros) for i in (2, 3, 4)]
    _refused(attack, padded, grpc.StatusCode.PERMISSION_DENIED)


@pytest.mark.network
def test_fewer_than_the_threshold_of_contributors_are_refused(attack):
    _refused(attack, [contribution(i, attack.target[i]) for i in (1, 2, 3)], grpc.StatusCode.FAILED_PRECONDITION)


@pytest.mark.network
def test_a_contribution_from_an_earlier_session_is_refused(attack):
    mixed = [contribution(1, attack.earlier[1])] + [contribution(i, attack.target[i]) for i in (2, 3, 4)]
    _refused(attack, mixed, grpc.StatusCode.PERMISSION_DENIED)


@pytest.mark.network
def test_a_contribution_counted_twice_is_refused(attack):
    twice = [contribution(i, attack.target[i]) for i in (1, 1, 2, 3)]
    _refused(attack, twice, grpc.StatusCode.INVALID_ARGUMENT)
    # The same votes under another sender's name: the signature names its sender.
    relabelled = [contribution(i, attack.target[i]) for i in (1, 2, 3)] + [contribution(4, attack.target[1])]
    _refused(attack, relabelled, grpc.StatusCode.PERMISSION_DENIED)


@pytest.mark.network
def test_a_forged_sender_or_a_bad_signature_is_refused(attack):
    honest = [contribution(i, attack.target[i]) for i in (1, 2, 3)]
    flipped = threshold_sum_pb2.ContributionSignature()
    flipped.CopyFrom(attack.target[4].signature)
    flipped.signature = flipped.signature[:-1] + bytes([flipped.signature[-1] ^ 1])
    _refused(attack, honest + [contribution(4, attack.target[4], flipped)], grpc.StatusCode.PERMISSION_DENIED)
    # Votes the aggregator made itself for party 4, signed with its own (CA-issued) key.
    tls = attack.d.topology.tls_for(AGGREGATOR)
    signer = ContributionSigner.from_files(tls.key, tls.certificate)
    digest = SumSlot.of("dppp", "target", DpppParameters.from_proto(attack.dppp_queries.parameters)).digest(4, attack.public.key_id, list(attack.target[1].votes.values))
    own = threshold_sum_pb2.ContributionSignature(signature=signer.sign(digest), certificate=signer.certificate)
    _refused(attack, honest + [contribution(4, attack.target[1], own)], grpc.StatusCode.PERMISSION_DENIED)
    # Party 4's genuine signature over votes it did not send.
    _refused(attack, honest + [contribution(4, attack.target[1], attack.target[4].signature)],
             grpc.StatusCode.PERMISSION_DENIED)


@pytest.mark.network
def test_a_second_subset_in_the_same_slot_is_refused(attack):
    """Last of the attacks: the holder, untouched by every refusal before, decrypts one honest sum once."""
    assert attack.ask([contribution(i, attack.target[i]) for i in (1, 2, 3, 4)]) == grpc.StatusCode.OK
    assert list(attack.hostile.wait_for("target", "partial_decryptions", [HOLDER])) == [HOLDER]
    subset = [contribution(i, attack.target[i]) for i in (1, 2, 3, 5)]
    assert attack.ask(subset) in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ABORTED)
    assert attack.released() == {HOLDER: 1}


@pytest.mark.network
def test_a_colluding_key_holder_gets_no_second_subset_of_a_slot_at_the_default_threshold(attack):
    """Party 1 holds a key share and colludes: it partially decrypts whatever the aggregator asks. The aggregator
    splits the four honest holders between two subsets of one slot, S1 = {1, 2, 3, 4} and S2 = {2, 3, 4, 5}
    (S2 − S1 + x1 would be party 5's votes with only its own noise share). At t = 4 of 5, the default and the
    smallest `keygen` accepts with c = 1 (2t > ℓ + c), each honest holder answers one subset only: neither
    subset reaches t partial decryptions beyond the one the colluder adds."""
    from launcher.deployment import keygen
    from mpdp.threshold_sum.quorums import QuorumError, smallest_threshold

    assert attack.public.threshold == 4 == smallest_threshold(K, 1)
    with pytest.raises(QuorumError):  # before any key generation
        keygen.ceremony(K, attack.d.topology.public_key.parent / "never", 1024, threshold=3)
    subsets = {"S1": [1, 2, 3, 4], "S2": [2, 3, 4, 5]}
    asked_first = {2: "S1", 3: "S1", 4: "S2", 5: "S2"}
    answered: dict[str, set[int]] = {"S1": {1}, "S2": {1}}  # the colluder's own partials go to both
    for holder, name in asked_first.items():
        assert attack.ask([contribution(i, attack.earlier[i]) for i in subsets[name]], "earlier", holder) == \
            grpc.StatusCode.OK
        answered[name].add(holder)
    attack.hostile.wait_for("earlier", "partial_decryptions", list(asked_first))
    for holder, name in asked_first.items():  # the other subset, at every honest holder
        other = "S2" if name == "S1" else "S1"
        assert attack.ask([contribution(i, attack.earlier[i]) for i in subsets[other]], "earlier", holder) in \
            (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ABORTED)
    assert attack.released("earlier") == {2: 1, 3: 1, 4: 1, 5: 1}  # one answer each, no more
    assert all(len(holders) < attack.public.threshold for holders in answered.values())


@pytest.mark.network
def test_a_session_the_client_did_not_open_spends_nothing_at_any_party(attack):
    """The hostile aggregator opens DPPP sessions at every party by itself: unsigned, signed with its own
    certificate, and carrying the client's signature of the `target` session. Every party refuses each with
    PERMISSION_DENIED before any work, and no party's ledger (read from its own file) changes."""
    from mpdp.sessions import opening

    def ledgers() -> dict[int, list]:
        """Every party's ledger but the sessions that `released` opens to hear from the holders."""
        return {i: [entry for entry in Ledger(attack.d.topology.entry(party(i)).data, i).entries()
                    if not str(entry["session"]).startswith("probe-")] for i in range(1, K + 1)}

    before = ledgers()
    tls = attack.d.topology.tls_for(AGGREGATOR)
    parameters = DpppParameters.from_proto(attack.dppp_queries.parameters)
    features = attack.dppp_queries.features.SerializeToString(deterministic=True)
    own = opening.sign(ContributionSigner.from_files(tls.key, tls.certificate), "dppp", "by-itself", parameters,
                       features)
    reused = attack.hostile.client_signed("target", "dppp", attack.dppp_queries).client_signature
    for signature in (None, own, reused):
        queries = dppp_pb2.DpppQueries()
        queries.CopyFrom(attack.dppp_queries)
        if signature is not None:
            queries.client_signature.CopyFrom(signature)
        for number in range(1, K + 1):
            with pytest.raises(grpc.RpcError) as refused:
                attack.hostile.step(party(number), "by-itself", dppp=dppp_pb2.DpppMessage(queries=queries))
            assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED and "client" in refused.value.details()
    assert attack.released("by-itself") == {} and attack.hostile.received("by-itself", "votes") == {}
    assert ledgers() == before


@pytest.mark.network
def test_after_the_attacks_an_honest_round_succeeds(attack):
    attack.close()  # the real aggregator serves again
    report = attack.d.run_dppp(queries=4)
    assert report["result"]["contributors"] == list(range(1, K + 1))


# ---------------------------------------------------------------------------------------------- in process

@pytest.fixture(scope="module")
def issued(tmp_path_factory):
    directory = tmp_path_factory.mktemp("certs")
    certs.issue(directory, [party(1), AGGREGATOR])
    other = tmp_path_factory.mktemp("other-ca")
    certs.issue(other, [party(1)])
    return directory, other


def _keys(directory, identity: Identity) -> ContributionKeys:
    cert, key = certs.certificate_files(directory, identity)
    return ContributionKeys(ContributionVerifier.from_file(directory / certs.CA_FILE),
                            lambda name, sender: name == f"party/{sender}", ContributionSigner.from_files(key, cert))


def test_signatures_bind_protocol_session_sender_slot_key_and_ciphertexts(issued):
    directory, other = issued
    keys = _keys(directory, party(1))
    slot, key_id, values = SumSlot("du", "s", 3), b"k" * 32, [b"\x01" * 8, b"\x02" * 8]
    signature = keys.sign(slot.digest(1, key_id, values))
    keys.check(1, slot.digest(1, key_id, values), signature)
    for changed in (SumSlot("dppp", "s", 3).digest(1, key_id, values), SumSlot("du", "t", 3).digest(1, key_id, values),
                    SumSlot("du", "s", 4).digest(1, key_id, values), slot.digest(1, b"j" * 32, values),
                    slot.digest(1, key_id, values[:1]), slot.digest(1, key_id, [values[1], values[0]])):
        with pytest.raises(Exception, match="does not verify"):
            keys.check(1, changed, signature)
    with pytest.raises(Exception, match="does not speak for it"):
        keys.check(2, slot.digest(1, key_id, values), signature)  # a valid signature, by another party
    foreign = _keys(other, party(1)).sign(slot.digest(1, key_id, values))  # another CA's certificate
    with pytest.raises(Exception, match="not issued by the deployment CA"):
        keys.check(1, slot.digest(1, key_id, values), foreign)
    with pytest.raises(BadSignature):
        keys.verifier.verify(slot.digest(1, key_id, values), b"", signature.certificate)


def test_a_party_takes_part_in_a_session_id_once(tmp_path, threshold_key):
    """Contributions are signed for the session id: a reopened id could mix the earlier session's with its own."""
    public, shares = threshold_key
    data = tmp_path / "party_1.npz"
    data.write_bytes(b"records")
    provision(data, 1)
    own = PartyResources(1, public, shares[0], None, np.zeros((2, 2)), np.zeros(2), ledger=Ledger(data, 1, UNLIMITED))
    spent = Guarantee(0.1, 0.0, "pure", {"kind": "pure", "epsilon": 0.1, "count": 1})
    own.spend("once", "dppp", spent)
    for protocol in ("dppp", "hamm"):
        with pytest.raises(ProtocolError) as refused:
            own.spend("once", protocol, spent)
        assert refused.value.kind is Kind.FAILED_PRECONDITION
    own.spend("another", "dppp", spent)
    assert [entry["session"] for entry in Ledger(data, 1).entries()] == ["once", "another"]


def test_du_holders_decrypt_each_round_once_and_only_that_rounds_signed_uploads(threshold_key, issued, tmp_path):
    """Du with secure aggregation, in process, every party signing with its own certificate: an upload of
    another round, one upload alone, or a round decrypted twice is refused; an honest round is answered."""
    from mpdp.learning import datasets
    from mpdp.proto.v1 import du_pb2
    from mpdp.protocols.du.parameters import DuParameters
    from party.du import DuPartySide

    public, shares = threshold_key
    directory = tmp_path / "du-certs"
    certs.issue(directory, [party(i) for i in range(1, 6)])
    data = datasets.load("breast-cancer")
    parameters = DuParameters(method="functional", epsilon=1.0, delta=1e-5, rounds=3, tolerance=0.0, local_epochs=1,
                              learning_rate=1.0, regularization=0.01, parties=5, dimension=30, bound=50.0,
                              secure_aggregation=True, honest_fraction=2 / 3, key_id=public.key_id)
    sides = {i: DuPartySide("du-run", PartyResources(i, public, shares[i - 1], None, data.features[40 * i:40 * i + 40],
                                                      data.labels[40 * i:40 * i + 40], test_mode=True,
                                                      contribution_keys=_keys(directory, party(i))),
                            parameters, 30.0, 0) for i in range(1, 6)}

    def uploads(round_number: int) -> dict[int, du_pb2.DuUpload]:
        model = du_pb2.DuModel(parameters=parameters.to_proto(), round=round_number, theta=[0.0] * parameters.weights)
        return {i: side.receive(AGGREGATOR, "model", model)[0].body for i, side in sides.items()}

    def ask(round_number: int, contributions: dict[int, du_pb2.DuUpload]):
        request = threshold_sum_pb2.DecryptionRequest(contributions=[threshold_sum_pb2.Contribution(
            sender=i, ciphertexts=u.encrypted, signature=u.signature) for i, u in contributions.items()])
        body = du_pb2.DuDecryptionRequest(round=round_number, request=request)
        return lambda: sides[1].receive(AGGREGATOR, "decryption_request", body)

    def refused(call) -> Kind:
        with pytest.raises(ProtocolError) as error:
            call()
        return error.value.kind

    first = uploads(0)
    assert refused(ask(0, {1: first[1]})) is Kind.FAILED_PRECONDITION  # one upload alone
    assert refused(ask(1, {i: first[i] for i in (1, 2, 3, 4)})) is Kind.FAILED_PRECONDITION  # a round not yet run
    second = uploads(1)
    mixed = {1: first[1], **{i: second[i] for i in (2, 3, 4)}}  # party 1's round-0 upload in round 1
    assert refused(ask(1, mixed)) is Kind.PERMISSION_DENIED
    [answer] = ask(0, {i: first[i] for i in (1, 2, 3, 4)})()
    assert answer.kind == "partial_decryptions" and answer.body.round == 0
    assert refused(ask(0, {i: first[i] for i in (1, 2, 3, 5)})) is Kind.FAILED_PRECONDITION  # round 0 again
    [answer] = ask(1, {i: second[i] for i in (1, 2, 3, 4, 5)})()
    assert answer.body.round == 1


def test_one_contribution_is_refused_even_when_the_session_names_a_threshold_of_one(threshold_key, issued):
    """τ is a session parameter an active opener chooses: with ⌈τK⌉ = 1 a holder still wants two senders."""
    from mpdp.threshold_sum import decryption

    public, _ = threshold_key
    directory, _ = issued
    keys = _keys(directory, party(1))
    slot = SumSlot("hamm", "s", 0)
    value = public.encryptor.encrypt(1)
    wire = ciphertexts_to_proto(public, [value])
    signature = keys.sign(slot.digest(1, bytes(wire.key_id), list(wire.values)))
    request = threshold_sum_pb2.DecryptionRequest(contributions=[threshold_sum_pb2.Contribution(
        sender=1, ciphertexts=wire, signature=signature)])
    with pytest.raises(ProtocolError, match="insufficient noise: 1 contributors, need 2"):
        decryption.check_request(public, request, slot, keys, parties=5, min_contributors=1, ciphertext_count=1)


def test_a_sum_short_of_contributors_names_why_the_others_are_missing():
    """The client's one line says why (a party over its privacy budget), not only how many came."""
    from mpdp.threshold_sum.collector import SumCollector

    collector = SumCollector(None, [1, 2, 3, 4, 5], 1, 4, SumSlot("dppp", "s"))  # no key needed to refuse
    for number in (1, 2, 3):
        collector.mark_absent(number, "over the budget: δ 1e-05 > 1e-05")
    collector.mark_absent(4, "sent no votes by the deadline")
    with pytest.raises(ProtocolError) as refused:
        collector.close()
    assert "0 of 5 parties contributed, need 4" in str(refused.value)
    assert "parties 1, 2, 3: over the budget" in str(refused.value) and "4: sent no votes" in str(refused.value)


def test_thousands_missing_for_one_reason_are_named_by_the_first_few():
    """At M = 10 000 a passed deadline leaves thousands silent: the line names eight and counts the rest."""
    from mpdp.threshold_sum.collector import SumCollector

    collector = SumCollector(None, list(range(1, 10_001)), 1, 6_667, SumSlot("hamm", "s"))
    for number in range(1, 10_001):
        collector.mark_absent(number, "no vote within the session's deadline of 300 s")
    with pytest.raises(ProtocolError) as refused:
        collector.close()
    assert "parties 1, 2, 3, 4, 5, 6, 7, 8 and 9992 more: no vote within" in str(refused.value)
    assert len(str(refused.value)) < 300


def test_a_colluding_key_holder_got_two_subsets_of_one_slot_decrypted_with_t_3_of_5(threshold_key, tmp_path):
    """The key `keygen --threshold 3` made for five holders before 2t > ℓ + c was required (here made through
    mpdp.cryptocore, below the launcher's check). Du with secure aggregation, in process, every holder's real side:
    party 1 holds a share and colludes with the aggregator. Holders 2 and 3 each decrypt round 0 once, for
    S1 = {1, 2, 3, 4}; holders 4 and 5 each once, for S2 = {2, 3, 4, 5}; party 1's share decrypts both. Each
    subset has t = 3 partial decryptions: both sums open, and S2 − S1 + x1 is party 5's upload alone, with only
    its own noise share. The launcher refuses that key before any exists."""
    from launcher.deployment import keygen
    from mpdp.cryptocore.paillier.threshold import PartialDecryption, combine
    from mpdp.proto.v1 import du_pb2
    from mpdp.protocols.du.parameters import DuParameters
    from mpdp.threshold_sum.quorums import QuorumError
    from party.du import DuPartySide

    public, shares = threshold_key
    assert (public.threshold, public.holders) == (3, 5)
    with pytest.raises(QuorumError, match=r"threshold t = 3 of ℓ = 5 key holders, c = 1"):
        keygen.ceremony(5, tmp_path / "keys", 1024, threshold=3)
    assert not (tmp_path / "keys").exists()
    directory = tmp_path / "du-certs"
    certs.issue(directory, [party(i) for i in range(1, 6)])
    rng = np.random.default_rng(7)  # small parts: what is shown is the decryption, not the training
    parts = {i: (rng.uniform(-0.5, 0.5, (20, 4)), rng.integers(0, 2, 20)) for i in range(1, 6)}
    parameters = DuParameters(method="functional", epsilon=1.0, delta=1e-5, rounds=1, tolerance=0.0, local_epochs=1,
                              learning_rate=1.0, regularization=0.01, parties=5, dimension=4, bound=50.0,
                              secure_aggregation=True, honest_fraction=2 / 3, key_id=public.key_id)
    sides = {i: DuPartySide("du-split", PartyResources(i, public, shares[i - 1], None, *parts[i], test_mode=True,
                                                        contribution_keys=_keys(directory, party(i))),
                            parameters, 30.0, 0) for i in range(1, 6)}
    model = du_pb2.DuModel(parameters=parameters.to_proto(), round=0, theta=[0.0] * parameters.weights)
    uploads = {i: side.receive(AGGREGATOR, "model", model)[0].body for i, side in sides.items()}
    count = len(uploads[1].encrypted.values)

    def request(subset: list[int]) -> du_pb2.DuDecryptionRequest:
        return du_pb2.DuDecryptionRequest(round=0, request=threshold_sum_pb2.DecryptionRequest(contributions=[
            threshold_sum_pb2.Contribution(sender=i, ciphertexts=uploads[i].encrypted, signature=uploads[i].signature)
            for i in subset]))

    def product(subset: list[int]) -> list[int]:
        columns = zip(*[ciphertexts_from_proto(public, uploads[i].encrypted, count) for i in subset])
        return [ct.add(public.paillier, *column) for column in columns]

    checked = min(2, count)  # ciphertexts looked at: enough to see both sums open

    def opened(subset: list[int], honest: tuple[int, int]) -> list[int]:
        partials = {1: [shares[0].partial_decrypt(c).value for c in product(subset)[:checked]]}
        for holder in honest:  # each honest holder's one answer in this round, from its own side
            [answer] = sides[holder].receive(AGGREGATOR, "decryption_request", request(subset))
            partials[holder] = [int.from_bytes(v, "big") for v in answer.body.partials.values]
        return [combine(public, [PartialDecryption(h, values[j]) for h, values in partials.items()])
                for j in range(checked)]

    first, second = opened([1, 2, 3, 4], (2, 3)), opened([2, 3, 4, 5], (4, 5))

    def plain(sender: int) -> list[int]:  # the test's own view, with three honest shares
        return [combine(public, [shares[k].partial_decrypt(c) for k in (1, 2, 3)])
                for c in ciphertexts_from_proto(public, uploads[sender].encrypted, count)[:checked]]

    own, victim = plain(1), plain(5)
    assert [(b - a + x) % public.n for a, b, x in zip(first, second, own)] == victim
