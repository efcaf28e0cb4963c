"""Attacks on the roles as an active aggregator, an active curator, a malicious party and a curious
container would mount them (spec README, threat model). Each test documents one attack; one that still
works is marked xfail(strict=True) with what it gains, so the day it stops working the suite says so."""

from __future__ import annotations

import secrets

import pytest

from launcher.deployment import processes
from mpdp.cryptocore.paillier import keyfiles, threshold
from mpdp.learning import datasets
from mpdp.sessions.identity import CLIENT, party
from mpdp.threshold_sum.quorums import QuorumError
from mpdp.vote_proofs.assurance import Assurance
from mpdp.wire.identity import Principal
from tests.hostile_aggregator import client_signature_from

BITS = 1024


def test_no_party_process_holds_a_decrypting_quorum_of_shares(tmp_path):
    """One process hosting parties 1–4 of 5, with t = 4 of 5 holders: party/1-4's bundle would hold shares 1..4.
    The attack: that host's operator decrypts party 5's ciphertext with its own files and nobody else. Refused
    before any key exists (2t > ℓ + c fails), unless the operator says one operator runs those parties (a
    simulation)."""
    parties, first_host = 5, Principal("party", 1, 4)
    hosts = {party(j): first_host if j <= 4 else Principal.of(party(j)) for j in range(1, parties + 1)}
    with pytest.raises(QuorumError, match=r"t = 4 of ℓ = 5 key holders, c = 4 held by one principal: need 2t > ℓ \+ c"):
        processes.prepare(tmp_path / "refused", parties, BITS, datasets.load("breast-cancer"),
                          processes.loopback_addresses(parties, hosts), seed=3, hosts=hosts, threshold=4)
    assert not list((tmp_path / "refused").rglob("key_share_*")) and not list((tmp_path / "refused").rglob("*.pem"))

    topology = processes.prepare(tmp_path / "run", parties, BITS, datasets.load("breast-cancer"),
                                 processes.loopback_addresses(parties, hosts), seed=3, hosts=hosts, threshold=4,
                                 single_operator=True)
    public = keyfiles.load_public_key(topology.public_key)
    host_bundle = processes.RunDirectory(tmp_path / "run").bundle(first_host)
    shares = [keyfiles.load_key_share(path) for path in sorted(host_bundle.glob("key_share_*"))]
    secret_vote = secrets.randbelow(1 << 32)
    victims_ciphertext = public.encryptor.encrypt(secret_vote)  # what party 5 would send, under the joint key
    partials = [share.partial_decrypt(victims_ciphertext) for share in shares[:public.threshold]]
    assert threshold.combine(public, partials) == secret_vote  # what --single-operator states: one operator


def test_a_process_below_the_threshold_is_accepted_at_the_threshold_its_shares_need(tmp_path):
    """`--parties-per-process 3` of 5: parties 1–3 hold three shares, so the default rises from ⌊2ℓ/3⌋ + 1 = 4 to
    5 (2t > ℓ + c); no host holds a quorum."""
    hosts = processes.party_hosts(5, 3)
    topology = processes.prepare(tmp_path / "run", 5, BITS, datasets.load("breast-cancer"),
                                 processes.loopback_addresses(5, hosts), seed=3, hosts=hosts)
    assert keyfiles.load_public_key(topology.public_key).threshold == 5


def test_no_layout_up_accepts_lets_one_principal_split_the_honest_holders_into_two_quorums():
    """Every `up --parties K --parties-per-process P` with K ≤ 20: the threshold the launcher picks (or its refusal)
    against the colluding principal's c shares. Two subsets of one slot each reach t partials when the ℓ − c honest
    holders split into two groups of t − c; with consecutive hosts and t = ⌊2ℓ/3⌋ + 1 (accepted when c < t) that
    was open in 55 of these layouts (35 with 2 ≤ P, K ≤ 16), among them K = 7, P = 3 (t = 5, c = 3) and K = 4,
    P = 2 (t = 3, c = 2). None is open at the threshold the launcher picks, which counts c."""
    from launcher.deployment.keygen import committee_size

    def split(holders: int, colluding: int, t: int) -> bool:
        return 2 * (t - colluding) <= holders - colluding

    consecutive_exposed, exposed, refused = [], [], []
    for parties in range(2, 21):
        holders = committee_size(parties)
        for per_process in range(1, parties + 1):
            old_c, old_t = min(per_process, holders), 2 * holders // 3 + 1
            if old_c < old_t and split(holders, old_c, old_t):
                consecutive_exposed.append((parties, per_process))
            hosts = processes.party_hosts(parties, per_process)
            colluding = max([1] + [sum(hosts[party(j)] == host for j in range(1, holders + 1))
                                   for host in set(hosts.values())])
            try:
                t = processes.check_quorum_hosts(hosts, holders, None)
            except QuorumError:
                refused.append((parties, per_process))
                continue
            if split(holders, colluding, t) or colluding >= t:
                exposed.append((parties, per_process, t, colluding))
    assert {(7, 3), (4, 2), (5, 3)} <= set(consecutive_exposed)
    assert exposed == []
    assert all(per_process >= committee_size(parties) for parties, per_process in refused)  # one host holds all


def test_a_key_holder_refuses_to_serve_a_key_whose_quorums_one_host_could_split():
    """What a holder checks of 2t > ℓ + c itself, at start: t and ℓ from its key, c from its bundle's topology (which
    names every key holder and its host). A bundle assembled by hand around a t = 4 of 5 key with parties 1–3 in
    one process is refused; so is t = 3 with every party alone; t = 5 with the shared host, or a single-operator
    simulation, serves."""
    import dataclasses
    from pathlib import Path
    from types import SimpleNamespace

    from launcher.deployment.serve import check_quorums
    from mpdp.deployments.topology import RoleEntry, Topology
    from mpdp.sessions.identity import AGGREGATOR, CURATOR

    def topology(hosts: list[tuple[int, int]]) -> Topology:
        roles = [RoleEntry(AGGREGATOR, "127.0.0.1:1"), RoleEntry(CURATOR, "127.0.0.1:2")]
        for port, (first, last) in enumerate(hosts, start=10):
            roles += [RoleEntry(party(i), f"127.0.0.1:{port}", key_holder=True,
                                host=f"party/{first}-{last}" if last > first else None)
                      for i in range(first, last + 1)]
        return Topology(Path("public.json"), tuple(roles), insecure=True)

    shared, alone = topology([(1, 3), (4, 4), (5, 5)]), topology([(i, i) for i in range(1, 6)])
    key = lambda t: SimpleNamespace(threshold=t, holders=5)  # noqa: E731
    with pytest.raises(QuorumError, match="c = 3"):
        check_quorums(shared, key(4))
    with pytest.raises(QuorumError, match="c = 1"):
        check_quorums(alone, key(3))
    check_quorums(shared, key(5))
    check_quorums(alone, key(4))
    check_quorums(dataclasses.replace(shared, single_operator=True), key(4))


@pytest.mark.parametrize("noise", ["binomial", "skellam"])
def test_a_decryptable_dppp_sum_keeps_full_noise_without_one_colluding_teacher(noise):
    """An active aggregator with the one malicious teacher the threat model allows names K = 10, τ = 0.2 and asks
    for {victim, accomplice}: the accomplice subtracts its own votes and noise. What is left, the victim's share
    alone, must still carry the noise (ε, δ) needs."""
    from mpdp.proto.v1 import common_pb2, threshold_sum_pb2
    from mpdp.protocols.dppp.parameters import DpppParameters
    from mpdp.threshold_sum import decryption

    parameters = DpppParameters.with_minimal_noise(5.0, 1e-5, 10, 2, 10, 0.2, True, bytes(32), noise=noise)
    victim, accomplice = 3, 7
    request = threshold_sum_pb2.DecryptionRequest(contributions=[
        threshold_sum_pb2.Contribution(sender=sender, ciphertexts=common_pb2.Ciphertexts(values=[b"\x01"]))
        for sender in (victim, accomplice)])
    try:  # the holder's checks before its signature checks (both contributions are genuine and signed)
        decryption._check_shape(request, parameters.teachers, parameters.calibration.min_contributors, 1)
    except Exception:  # noqa: BLE001 — a refusal is an answer too
        return
    calibration = parameters.calibration
    if noise == "binomial":  # the victim's own tosses, counted here rather than by the code under test
        assert calibration.tosses_per_teacher >= calibration.total_tosses
    else:
        assert calibration.share_mu >= calibration.mu * (1 - 1e-12)


def test_a_decryptable_hamm_sum_keeps_full_noise_without_one_colluding_voter():
    from mpdp.protocols.hamm.parameters import HammParameters

    for count_noise in ("binomial", "skellam"):
        parameters = HammParameters("vote", 1.0, 1e-5, 0.01, 2, 10, 50, 4, True, False, 0.2, b"k" * 32, count_noise)
        assert parameters.min_contributors == 2
        if parameters.skellam is None:  # the victim's own tosses, counted here
            assert parameters.tosses_per_party >= parameters.total_tosses > 0
        else:
            assert parameters.skellam.share_mu >= parameters.skellam.mu * (1 - 1e-12)


class _FixedTeacher:
    """A teacher's classifier: every query labelled 1 (what it predicts is not what the attack is about)."""

    def predict(self, features):
        import numpy as np

        return np.ones(len(features), dtype=int)


def test_dppp_holders_refuse_contributions_made_under_other_parameters(threshold_key, tmp_path):
    """An active DPPP aggregator tells the victims (teachers 1, 2) τ = 1, so N_i = N/K tosses each, and the key
    holders 3..5 τ = 1/K, so two contributions suffice: without the parameters in the signed binding, t holders
    decrypt the two victims' votes with 2N/K tosses where (ε, δ) needs N. Every holder must refuse."""
    import numpy as np

    from launcher.deployment import certs
    from mpdp.cryptocore.keys.contribution_signature import ContributionSigner, ContributionVerifier
    from mpdp.privacy.binomial import minimal_tosses
    from mpdp.proto.v1 import dppp_pb2, threshold_sum_pb2
    from mpdp.protocols.dppp.parameters import DpppParameters
    from mpdp.sessions.errors import ProtocolError
    from mpdp.sessions.identity import AGGREGATOR
    from mpdp.sessions.matrices import matrix_to_proto
    from mpdp.threshold_sum.binding import ContributionKeys
    from mpdp.threshold_sum.codec import batch_from_proto
    from party.dppp import protocol
    from party.resources import PartyResources

    public, shares = threshold_key  # t = 3 of 5: holders 3, 4 and 5 decrypt without the victims
    teachers, queries, epsilon, delta = 5, 4, 5.0, 1e-5
    certs.issue(tmp_path, [party(i) for i in range(1, teachers + 1)] + [CLIENT])

    def keys(i: int) -> ContributionKeys:
        cert, key = certs.certificate_files(tmp_path, party(i))
        return ContributionKeys(ContributionVerifier.from_file(tmp_path / certs.CA_FILE),
                                lambda name, sender: name == f"party/{sender}", ContributionSigner.from_files(key, cert))

    features = np.zeros((queries, 3))
    own = {party(i): PartyResources(i, public, shares[i - 1], _FixedTeacher(), np.zeros((10, 3)), np.zeros(10),
                                    test_mode=True, contribution_keys=keys(i)) for i in range(1, teachers + 1)}
    opener = protocol(own.__getitem__)

    def parameters(tau: float) -> DpppParameters:
        return DpppParameters(epsilon, delta, queries, 2, teachers, tau, True, public.key_id,
                              minimal_tosses(epsilon, delta, queries))

    told = {1: parameters(1.0), 2: parameters(1.0), 3: parameters(0.2), 4: parameters(0.2), 5: parameters(0.2)}
    sides, votes = {}, {}
    for i, p in told.items():  # the hostile aggregator opens one session id, with two sets of parameters
        # each signed by the client, as if its key were in the wrong hands: the binding alone must refuse
        signature = client_signature_from(tmp_path, "dppp", "split", p,
                                          matrix_to_proto(features).SerializeToString(deterministic=True))
        sides[i] = opener.open("split", party(i), AGGREGATOR, "queries", dppp_pb2.DpppQueries(
            parameters=p.to_proto(), features=matrix_to_proto(features), deadline_seconds=60,
            client_signature=signature))
        votes[i] = sides[i].cast_votes()
    assert told[1].calibration.tosses_per_teacher * 2 < told[1].calibration.total_tosses  # 2N/5 < N
    request = threshold_sum_pb2.DecryptionRequest(contributions=[threshold_sum_pb2.Contribution(
        sender=i, ciphertexts=votes[i].votes, signature=votes[i].signature) for i in (1, 2)])
    answered = {}
    for holder in (3, 4, 5):
        try:
            answered[holder] = sides[holder].partially_decrypt(request)
        except ProtocolError:
            pass
    if len(answered) >= public.threshold:  # the gain: the two victims' noisy votes, exactly
        partials = [batch_from_proto(public, h, answered[h], 1).share(0) for h in sorted(answered)]
        layout = told[1].layout(public.n)
        expected = sum(layout.pack((sides[i].drawn.votes + sides[i].drawn.noise).ravel().tolist())[0]
                       for i in (1, 2)) % public.n
        assert threshold.combine(public, partials[:public.threshold]) == expected
    assert len(answered) < public.threshold, f"holders {sorted(answered)} decrypted two victims' votes"


def test_ray_uploads_no_bundle_with_the_code(tmp_path):
    """`mpdp up --ray` ships the code's directory to every node as Ray's working_dir; `up` run from a checkout
    keeps its run directory (`.mpdp-run`, which `down` leaves in place) inside that directory. The attack: any
    actor — the aggregator's, say — reads every bundle of the earlier deployment from its working copy: each
    holder's key share and each role's TLS key, the client's included. No secret may be in the upload."""
    pytest.importorskip("ray")
    from ray._private.runtime_env import packaging

    from launcher.deployment import ray_hosts

    root = processes.Path(__file__).resolve().parent.parent  # the checkout
    default = root / ".mpdp-run"  # ignored by git, so an interrupted test leaves nothing to commit
    created = not default.exists()
    run_dir = default / f"red-team-{secrets.token_hex(4)}"
    try:
        processes.prepare(run_dir, 3, BITS, datasets.load("breast-cancer"), processes.loopback_addresses(3, {}),
                          seed=3)
        keys = run_dir.parent / f"{run_dir.name}-keys"  # `mpdp keygen --out` under the checkout: no run directory
        keys.mkdir(mode=0o700)
        for share in run_dir.rglob("key_share_*"):
            (keys / share.name).write_bytes(share.read_bytes())

        captured: dict = {}

        class _Ray:
            @staticmethod
            def init(**options):
                captured.update(options["runtime_env"])

        ray_hosts._init(_Ray, "127.0.0.1:1", "mpdp-red-team", run_dir)
        package = tmp_path / "working_dir.zip"
        packaging._zip_files(captured["working_dir"], captured["excludes"], str(package), include_gitignore=True)
        import zipfile

        names = zipfile.ZipFile(package).namelist()
        assert "launcher/deployment/ray_hosts.py" in names and "mpdp/__init__.py" in names  # the code goes
        leaked = [name for name in names if name.startswith(".mpdp-run/") or "key_share" in name
                  or name.endswith(".key")]
        assert not leaked, f"every actor would receive {leaked[:5]}"
    finally:
        import shutil

        shutil.rmtree(run_dir, ignore_errors=True)
        shutil.rmtree(default / f"{run_dir.name}-keys", ignore_errors=True)
        if created:
            shutil.rmtree(default, ignore_errors=True)


def _signing_keys(tmp_path, parties: int):
    """Party i's contribution keys (its own certificate signs), from one CA."""
    from launcher.deployment import certs
    from mpdp.cryptocore.keys.contribution_signature import ContributionSigner, ContributionVerifier
    from mpdp.threshold_sum.binding import ContributionKeys

    certs.issue(tmp_path, [party(i) for i in range(1, parties + 1)] + [CLIENT])
    verifier = ContributionVerifier.from_file(tmp_path / certs.CA_FILE)

    def keys(i: int | None) -> ContributionKeys:
        signer = None if i is None else ContributionSigner.from_files(*reversed(certs.certificate_files(tmp_path,
                                                                                                       party(i))))
        return ContributionKeys(verifier, lambda name, sender: name == f"party/{sender}", signer)

    return keys


def test_a_du_upload_badly_signed_costs_the_server_no_proof_check(threshold_key, tmp_path, monkeypatch):
    """A malicious Du party (or anyone replaying its bytes under its own certificate) sends a correctly proven
    upload whose contribution signature is not its own, again and again: the server refuses each one, but
    only after verifying the whole range proof (d + 1 bit-proof combinations and d product proofs), and the
    party, never excluded, may repeat it for the whole round. Cheap checks first: the ECDSA signature, which
    costs less than a millisecond, must be checked before the proof, so a refused upload costs no proof."""
    from aggregator.du import DuServerSide
    from mpdp.proto.v1 import common_pb2, du_pb2
    from mpdp.protocols.du import proven_upload
    from mpdp.protocols.du.parameters import DuParameters
    from mpdp.sessions.errors import ProtocolError
    from mpdp.sessions.identity import CLIENT
    from mpdp.threshold_sum.binding import SumSlot, signature_for

    public, _ = threshold_key
    keys = _signing_keys(tmp_path, 5)
    p = DuParameters(method="none", epsilon=1.0, delta=1e-5, rounds=2, tolerance=0.0, local_epochs=1,
                     learning_rate=1.0, regularization=0.01, parties=5, dimension=2, bound=4.0,
                     secure_aggregation=True, honest_fraction=2 / 3, key_id=public.key_id)
    server = DuServerSide("du-signature-first", p, 30.0, 0, public, [1, 2, 3, 4, 5], [1, 2, 3, 4, 5],
                          keys=keys(None))
    server.receive(CLIENT, "open", du_pb2.DuOpen())
    packed, proof = proven_upload.build(public, p, 40, [1 << 30] * p.weights,
                                        proven_upload.context(server.session_id, 1, 0))
    values = [c.to_bytes(2 * ((public.n.bit_length() + 7) // 8), "big") for c in packed]
    slot = SumSlot.of("du", server.session_id, p, 0)
    forged = signature_for(keys(2), slot, 1, public.key_id, values)  # party 2's certificate, for party 1
    upload = du_pb2.DuUpload(round=0, encrypted=common_pb2.Ciphertexts(key_id=public.key_id, values=values),
                             signature=forged, proof=proof)
    checked = []
    real_check = proven_upload.check
    monkeypatch.setattr(proven_upload, "check", lambda *a: checked.append(1) or real_check(*a))
    for _ in range(3):
        with pytest.raises(ProtocolError):
            server.receive(party(1), "upload", upload)
    assert not server.uploads and 1 not in server.rejected_uploads  # refused, and nothing changed
    assert not checked, f"{len(checked)} range proofs verified for uploads refused on their signature"
    upload.signature.CopyFrom(signature_for(keys(1), slot, 1, public.key_id, values))
    server.receive(party(1), "upload", upload)  # the same upload, signed by its sender: accepted
    assert list(server.uploads) == [1] and checked == [1]


def test_hamm_proven_votes_badly_signed_cost_the_aggregator_no_proof_check(threshold_key, tmp_path, monkeypatch):
    """The same attack on Hamm's proven votes: a voter's correctly proven ballot under a signature that is not its
    own is refused only after every one-hot proof was verified, and, never excluded, it may send it again. The
    aggregator folds the ballot (products, cheap), checks the signature on the folded vector, then the proofs."""
    import numpy as np

    from aggregator.hamm import HammAggregatorSide
    from mpdp.proto.v1 import hamm_pb2
    from mpdp.protocols.hamm.parameters import HammParameters
    from mpdp.sessions.errors import ProtocolError
    from mpdp.sessions.identity import AGGREGATOR
    from mpdp.sessions.matrices import matrix_to_proto
    from mpdp.vote_proofs import votes as vote_proofs
    from party.hamm import protocol
    from party.resources import PartyResources

    public, shares = threshold_key
    keys = _signing_keys(tmp_path, 5)
    p = HammParameters("vote", 1.0, 1e-5, 0.01, 2, 5, 4, 3, True, False, 0.6, public.key_id, "binomial",
                       assurance=Assurance.PROVEN_VOTES)
    queries = hamm_pb2.HammQueries(parameters=p.to_proto(), features=matrix_to_proto(np.zeros((4, 3))),
                                   deadline_seconds=60, client_signature=client_signature_from(
                                       tmp_path, "hamm", "hamm-signature-first", p))
    own = {party(i): PartyResources(i, public, shares[i - 1], _FixedTeacher(), np.zeros((10, 3)), np.zeros(10),
                                    test_mode=True, contribution_keys=keys(i)) for i in (1, 2)}
    opener = protocol(own.__getitem__)
    ballots = {i: opener.open("hamm-signature-first", party(i), AGGREGATOR, "queries", queries).cast_votes()
               for i in (1, 2)}
    aggregator = HammAggregatorSide("hamm-signature-first", p, queries, public, [1, 2, 3, 4, 5], [1, 2, 3, 4, 5],
                                    keys(None))
    forged = hamm_pb2.HammVotes()
    forged.CopyFrom(ballots[1])
    forged.signature.CopyFrom(ballots[2].signature)  # party 2's signature, on party 2's ballot
    checked = []
    real_check = vote_proofs.check_and_fold
    monkeypatch.setattr(vote_proofs, "check_and_fold", lambda *a: checked.append(1) or real_check(*a))
    for _ in range(3):
        with pytest.raises(ProtocolError):
            aggregator.receive(party(1), "votes", forged)
    assert not aggregator.collector.contributions and not aggregator.rejected_votes  # refused, nothing changed
    assert not checked, f"{len(checked)} ballots' proofs verified for votes refused on their signature"
    aggregator.receive(party(1), "votes", ballots[1])
    assert list(aggregator.collector.contributions) == [1] and checked == [1]


@pytest.mark.parametrize("threshold", [0, 1, 2, 3])
def test_a_key_holder_takes_no_part_in_a_key_that_does_not_bound_decryption(threshold):
    """An opening of the distributed key generation with 2t ≤ ℓ + 1 (here ℓ = 5): with t = 1 every holder, the one
    malicious party included, decrypts every contribution alone; with t = 2 two disjoint pairs could each decrypt
    another subset of one sum, and with t = 3 two triples sharing only the malicious holder could. Each holder
    refuses to make such a key at all, before any work (mpdp.threshold_sum.quorums)."""
    from mpdp.proto.v1 import keygen_pb2
    from mpdp.protocols.keygen.holder_side import KeygenHolderSide
    from mpdp.sessions.errors import ProtocolError
    from mpdp.sessions.identity import CLIENT

    stored: list = []
    side = KeygenHolderSide("keygen-low-threshold", party(1), [1, 2, 3, 4, 5], stored.append)
    with pytest.raises(ProtocolError, match="threshold"):
        side.start_keygen(CLIENT, keygen_pb2.KeygenOpen(bits=BITS, holders=5, threshold=threshold, batch=8))
    assert side.holder is None and side.state is side.State.OPEN and not stored


def test_a_du_proof_holds_only_for_its_own_session_sender_round_and_statement(threshold_key):
    """An active Du server, or a party replaying another's upload under its own certificate: a proven upload is
    checked under the context the server builds from its own session, the authenticated sender and the open
    round, so it fails under any other; and the proofs are bound to their statements, so swapping two products
    (their proofs with them), or re-randomising one ciphertext, fails too."""
    from mpdp.cryptocore.proofs import product_proof
    from mpdp.cryptocore.proofs.membership_proof import MembershipProofInvalid
    from mpdp.proto.v1 import common_pb2, du_pb2
    from mpdp.protocols.du import proven_upload
    from mpdp.protocols.du.parameters import DuParameters

    public, _ = threshold_key
    p = DuParameters(method="none", epsilon=1.0, delta=1e-5, rounds=2, tolerance=0.0, local_epochs=1,
                     learning_rate=1.0, regularization=0.01, parties=5, dimension=2, bound=4.0,
                     secure_aggregation=True, honest_fraction=2 / 3, key_id=public.key_id)
    packed, proof = proven_upload.build(public, p, 40, [1 << 30, -(1 << 31), 3], proven_upload.context("s", 1, 0))
    upload = common_pb2.Ciphertexts(key_id=public.key_id,
                                    values=[c.to_bytes(2 * ((public.n.bit_length() + 7) // 8), "big") for c in packed])
    proven_upload.check(public, p, upload, proof, proven_upload.context("s", 1, 0))  # as built: accepted
    for session, sender, round_number in [("s", 1, 1), ("s", 2, 0), ("t", 1, 0)]:
        with pytest.raises((MembershipProofInvalid, product_proof.ProductProofInvalid)):
            proven_upload.check(public, p, upload, proof, proven_upload.context(session, sender, round_number))
    swapped = du_pb2.DuRangeProof()
    swapped.CopyFrom(proof)
    swapped.products.values[0], swapped.products.values[1] = proof.products.values[1], proof.products.values[0]
    swapped.product_proofs[0].CopyFrom(proof.product_proofs[1])
    swapped.product_proofs[1].CopyFrom(proof.product_proofs[0])
    with pytest.raises(product_proof.ProductProofInvalid):
        proven_upload.check(public, p, upload, swapped, proven_upload.context("s", 1, 0))
    moved = du_pb2.DuRangeProof()
    moved.CopyFrom(proof)
    n2 = public.paillier.nsquare
    rerandomised = int.from_bytes(proof.bits.values[0], "big") * pow(public.hs, 12345, n2) % n2
    moved.bits.values[0] = rerandomised.to_bytes(len(proof.bits.values[0]), "big")  # same plaintext, new ciphertext
    with pytest.raises(MembershipProofInvalid):
        proven_upload.check(public, p, upload, moved, proven_upload.context("s", 1, 0))


def _three_holders_storing(monkeypatch):
    """Three holders' keygen protocol on planted primes, each holder's written share kept in `stored`."""
    from mpdp.protocols.keygen.protocol import holder_protocol
    from tests.test_dkg import plant_primes

    plant_primes(monkeypatch, BITS, 3, 8)
    stored: dict = {}
    protocol = holder_protocol([1, 2, 3], lambda me, share: stored.__setitem__(me.id, share),
                               lambda me: stored.pop(me.id, None))
    return protocol, stored


@pytest.mark.network
@pytest.mark.slow
def test_the_distributed_ceremony_leaves_every_secret_private_and_nothing_else(tmp_path):
    """`mpdp keygen --keygen distributed` into a directory an operator made world-readable, under umask 022: the
    holders' own processes write the shares. The attack: another local user reads a share (or a half-written
    temporary file) the ceremony left readable. Every file must be 0600 (the public key may be 0644), the
    directories 0700, and nothing else — no temporary file, no ceremony CA or log — may stay."""
    import os
    import stat
    import subprocess
    import sys

    out = tmp_path / "keys"
    out.mkdir(mode=0o755)
    os.chmod(out, 0o755)
    result = subprocess.run([sys.executable, "-m", "launcher.cli", "keygen", "--keygen", "distributed", "--parties",
                             "3", "--bits", str(BITS), "--out", str(out)], capture_output=True, text=True,
                            timeout=900, preexec_fn=lambda: os.umask(0o022), cwd=processes.Path.cwd())
    assert result.returncode == 0, result.stderr[-2000:]
    for path in [out, *out.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        if path.is_dir():
            assert mode == 0o700, f"{path} is {oct(mode)}"
        elif path.name == "public_key.json" or path.suffix == ".pem" and path.name != "ca.pem":
            assert mode & 0o022 == 0, f"{path} is {oct(mode)}"
        else:
            assert mode == 0o600, f"{path} is {oct(mode)}"
    names = sorted(p.name for p in out.iterdir() if p.is_file())
    assert names == ["key_share_1.json", "key_share_2.json", "key_share_3.json", "public_key.json"], names
    assert not [p for p in out.rglob(".*.tmp")]


def test_one_malicious_key_holder_cannot_make_one_holder_keep_a_share_while_another_aborts(monkeypatch):
    """The malicious holder 3 sends holder 2 a bad confirmation and holder 1 a good one. Holder 2 aborts and so
    never acknowledges; holder 1 then lacks an acknowledgement, prepares nothing, and the client has no agreed
    digest to commit: neither honest holder keeps a share (docs/distributed-keygen.md, "Commit")."""
    import random

    from mpdp.proto.v1 import keygen_pb2
    from mpdp.protocols.keygen import decision
    from mpdp.protocols.keygen.protocol import NAME
    from mpdp.sessions.identity import CLIENT
    from mpdp.wire.envelope import identities, unwrap, wrap
    from mpdp.wire.twin import InProcessNetwork

    class ThirdHolderEquivocates(InProcessNetwork):
        def deliver(self, envelope, call_id=""):
            sender, receiver = identities(envelope)
            if (sender, receiver) == (party(3), party(2)):
                protocol, kind, body = unwrap(envelope, self.registries[receiver])
                if kind == "round" and body.stage == "confirmation":  # its partial decryption, off by one
                    value = int.from_bytes(body.values[1], "big", signed=True) + 1
                    body.values[1] = value.to_bytes((value.bit_length() + 8) // 8, "big", signed=True)
                    envelope = wrap(self.session_id, sender, receiver, protocol, kind, body)
            super().deliver(envelope, call_id)

    protocol, stored = _three_holders_storing(monkeypatch)
    net = ThirdHolderEquivocates("keygen-split", {party(j): {NAME: protocol} for j in (1, 2, 3)}, random.Random(1))
    for j in (1, 2, 3):
        net.send(CLIENT, party(j), NAME, "open", keygen_pb2.KeygenOpen(bits=BITS, holders=3, threshold=3, batch=8))
    net.run()
    outcomes = {j: net.sides[party(j)].state.name for j in (1, 2)}
    assert net.sides[party(2)].state.name == "ABORTED"  # the bad confirmation is caught
    assert 1 not in stored and outcomes[1] != "DONE", f"honest holders disagree: {outcomes}, stored {sorted(stored)}"
    reports = [side.result()[1] for side in net.sides.values() if side.result() is not None]
    with pytest.raises(ValueError, match="prepared"):
        decision.decide(reports, 3)


@pytest.mark.parametrize("stage", ["products", "sieved", "inverse-products", "exponent-wrap", "key-shares"])
def test_a_key_holder_that_equivocates_on_a_broadcast_leaves_no_share_anywhere(monkeypatch, stage):
    """A malicious holder sends holder 2 another value than holder 1 in a stage whose value every holder must see
    alike (a broadcast travels as one RPC per recipient). The honest holders then hold different views; neither
    may store a share of a key built on them."""
    import random

    from mpdp.proto.v1 import keygen_pb2
    from mpdp.protocols.keygen.protocol import NAME
    from mpdp.sessions.identity import CLIENT
    from mpdp.wire.envelope import identities, unwrap, wrap
    from mpdp.wire.twin import InProcessNetwork

    class ThirdHolderEquivocates(InProcessNetwork):
        def deliver(self, envelope, call_id=""):
            sender, receiver = identities(envelope)
            if (sender, receiver) == (party(3), party(2)):
                protocol, kind, body = unwrap(envelope, self.registries[receiver])
                if kind == "round" and body.stage == stage:
                    value = int.from_bytes(body.values[0], "big", signed=True) ^ 1
                    body.values[0] = value.to_bytes((value.bit_length() + 8) // 8, "big", signed=True)
                    envelope = wrap(self.session_id, sender, receiver, protocol, kind, body)
            super().deliver(envelope, call_id)

    protocol, stored = _three_holders_storing(monkeypatch)
    net = ThirdHolderEquivocates("keygen-equivocation", {party(j): {NAME: protocol} for j in (1, 2, 3)},
                                 random.Random(2))
    for j in (1, 2, 3):
        net.send(CLIENT, party(j), NAME, "open", keygen_pb2.KeygenOpen(bits=BITS, holders=3, threshold=3, batch=8))
    net.run()
    outcomes = {j: net.sides[party(j)].state.name for j in (1, 2)}
    assert not {1, 2} & set(stored) and "DONE" not in outcomes.values(), (outcomes, sorted(stored))


def _keygen_against(monkeypatch, session: str, tamper, seed: int = 3):
    """Three holders over the twin of the network, holder 3's messages to holder 2 passed through `tamper(body)`
    (the body to deliver, or None: withheld). Returns (network, the shares written, the holders' registry)."""
    import random

    from mpdp.proto.v1 import keygen_pb2
    from mpdp.protocols.keygen.protocol import NAME
    from mpdp.sessions.identity import CLIENT
    from mpdp.wire.envelope import identities, unwrap, wrap
    from mpdp.wire.twin import InProcessNetwork

    class ThirdHolderCheats(InProcessNetwork):
        def deliver(self, envelope, call_id=""):
            sender, receiver = identities(envelope)
            if (sender, receiver) == (party(3), party(2)):
                protocol, kind, body = unwrap(envelope, self.registries[receiver])
                if kind == "round" and body.stage == "acknowledgement":
                    body = tamper(body)
                    if body is None:
                        return
                    envelope = wrap(self.session_id, sender, receiver, protocol, kind, body)
            super().deliver(envelope, call_id)

    protocol, stored = _three_holders_storing(monkeypatch)
    registries = {party(j): {NAME: protocol} for j in (1, 2, 3)}
    net = ThirdHolderCheats(session, registries, random.Random(seed))
    for j in (1, 2, 3):
        net.send(CLIENT, party(j), NAME, "open", keygen_pb2.KeygenOpen(bits=BITS, holders=3, threshold=3, batch=8))
    net.run()
    return net, stored, registries


def _client_commits(net, registries, holders, session="keygen-commit"):
    """What an honest client does: commit at every holder if all prepared the same digest (decision.decide)."""
    import random

    from mpdp.proto.v1 import keygen_pb2
    from mpdp.protocols.keygen import decision
    from mpdp.protocols.keygen.protocol import NAME
    from mpdp.sessions.identity import CLIENT
    from mpdp.wire.twin import InProcessNetwork

    reports = [net.sides[party(j)].result()[1] for j in holders if net.sides[party(j)].result() is not None]
    _, digest = decision.decide(reports, 3)
    twin = InProcessNetwork(session, registries, random.Random(1))
    for j in holders:
        twin.send(CLIENT, party(j), NAME, "commit", keygen_pb2.KeygenCommit(ceremony=net.session_id, digest=digest))
    twin.run()
    return twin


def test_a_key_holder_that_acknowledges_another_digest_to_one_holder_leaves_no_share_anywhere(monkeypatch):
    """Equivocation at the acknowledgement itself: holder 3 sends holder 1 the true digest and holder 2 another.
    Holder 2 aborts naming holder 3; holder 1 has every acknowledgement and prepares its share, in memory only.
    The client then lacks holder 2's report and commits nothing; its withdrawal drops holder 1's prepared share,
    after which not even a commit with the true digest writes it. Holder 3 can neither commit nor withdraw."""
    from mpdp.proto.v1 import keygen_pb2
    from mpdp.sessions.errors import ProtocolError
    from mpdp.sessions.identity import CLIENT

    def other_digest(body):
        body.values[0] = bytes([body.values[0][0]]) + bytes(b ^ 0xFF for b in body.values[0][1:])
        return body

    # the twin's delivery order (its seed) must bring holder 3's acknowledgement to holder 1 before holder 2's abort;
    # in the other order holder 1 aborts too, which is the trivial case
    net, stored, registries = _keygen_against(monkeypatch, "keygen-ack-equivocation", other_digest, seed=2)
    first, second = net.sides[party(1)], net.sides[party(2)]
    assert second.state.name == "ABORTED" and "key holder 3" in second.abort_reason
    assert first.state.name == "DONE" and not stored  # prepared, nothing written
    with pytest.raises(ValueError, match="2 of 3 key holders prepared"):
        _client_commits(net, registries, (1, 3))
    assert not first.may_abort(party(3)) and not first.may_abort(party(2)) and first.may_abort(CLIENT)
    digest = first.result()[1].digest
    opener = registries[party(1)]["keygen"]
    with pytest.raises(ProtocolError, match="may not commit"):  # refused before a side exists
        opener.open("keygen-forged-commit", party(1), party(3), "commit", None)
    first.abort("the client discards the key generation", withdraw_result=True)  # the client's withdrawal
    late = opener.open("keygen-late-commit", party(1), CLIENT, "commit", None)
    with pytest.raises(ProtocolError, match="no prepared share"):
        late.receive(CLIENT, "commit", keygen_pb2.KeygenCommit(ceremony=net.session_id, digest=digest))
    assert not stored and late.state.name == "OPEN"


def test_a_key_holder_that_withholds_its_acknowledgement_from_one_holder_leaves_no_share_anywhere(monkeypatch):
    """Holder 3 acknowledges to holder 1 only. Holder 1 prepares; holder 2 waits and, at its deadline, aborts
    (the timeout rule: no decision from the client within the deadline is a discard). The client has no report
    from holder 2 and commits nothing, so no share is written; had holder 3 then told holder 1 to abort, it would
    be refused (only the client decides for a prepared holder)."""
    from mpdp.sessions.errors import ProtocolError

    net, stored, registries = _keygen_against(monkeypatch, "keygen-ack-withheld", lambda body: None)
    first, second = net.sides[party(1)], net.sides[party(2)]
    assert first.state.name == "DONE" and second.state.name == "RUNNING" and second.result() is None
    with pytest.raises(ProtocolError, match="timed out"):
        second.on_deadline()
    second.abort("the session's deadline passed")
    with pytest.raises(ValueError, match="2 of 3 key holders prepared"):
        _client_commits(net, registries, (1, 3))
    assert not stored and not first.may_abort(party(3))


def test_a_key_holder_that_aborts_one_prepared_holder_cannot_split_the_commit(monkeypatch):
    """Holder 3 acknowledges to both honest holders, then sends holder 2 an abort and holder 1 nothing. Holder 2 is
    prepared, so the abort is refused (may_abort), and the client's commit reaches both alike: the honest holders
    keep shares of one key and it decrypts. A client that rolls back one commit removes that share again."""
    from mpdp.cryptocore.paillier.threshold import decrypt

    net, stored, registries = _keygen_against(monkeypatch, "keygen-abort-one", lambda body: body)
    first, second = net.sides[party(1)], net.sides[party(2)]
    assert first.state.name == second.state.name == "DONE"
    assert not second.may_abort(party(3))  # what the host asks before it lets a peer's abort through
    twin = _client_commits(net, registries, (1, 2, 3))
    assert not twin.refused and sorted(stored) == [1, 2, 3]
    public = stored[1].public
    assert stored[2].public == public
    c = public.encryptor.encrypt(77)
    assert decrypt(public, c, [stored[j].partial_decrypt(c, b"x") for j in (1, 2, 3)], b"x") == (77, {})
    twin.sides[party(2)].abort("another holder refused its commit", withdraw_result=True)  # the client rolls back
    assert sorted(stored) == [1, 3]


def test_a_replayed_or_stale_keygen_round_is_refused_and_changes_nothing():
    """The one malicious holder replays its own round-1 message and sends one of a round already past: each is
    refused with a clear status, and the holder's buffer and round stay as they were."""
    from mpdp.proto.v1 import keygen_pb2
    from mpdp.protocols.keygen.holder_side import KeygenHolderSide
    from mpdp.protocols.keygen.prepared import PreparedShares
    from mpdp.sessions.errors import ProtocolError
    from mpdp.sessions.identity import CLIENT

    side = KeygenHolderSide("keygen-replay", party(1), [1, 2, 3], PreparedShares())
    side.start_keygen(CLIENT, keygen_pb2.KeygenOpen(bits=BITS, holders=3, threshold=3, batch=8))
    first = keygen_pb2.KeygenRound(stage="candidates", attempt=1, round=1, values=[b"\x01"] * 24)
    side.take_round(party(2), first)
    before = (side.holder.round, {r: list(m) for r, m in side._pending.items()})
    for stale in (first, keygen_pb2.KeygenRound(stage="candidates", attempt=1, round=0, values=[b"\x01"])):
        with pytest.raises(ProtocolError):
            side.take_round(party(2), stale)
    assert (side.holder.round, {r: list(m) for r, m in side._pending.items()}) == before
    assert side.state is side.State.RUNNING


def test_a_du_holder_decrypts_each_round_once_and_no_round_it_has_not_reached(threshold_key):
    """An active Du server asks a key holder for a second decryption of a round it already answered (another
    subset of the round's uploads, or the same again), or for a round the holder has not trained yet: refused,
    and nothing changes, so per round at most one sum is ever decrypted."""
    import numpy as np

    from mpdp.proto.v1 import du_pb2, threshold_sum_pb2
    from mpdp.protocols.du.parameters import DuParameters
    from mpdp.sessions.errors import ProtocolError
    from mpdp.sessions.identity import AGGREGATOR
    from party.du import protocol
    from party.resources import PartyResources

    public, shares = threshold_key
    rng = np.random.default_rng(4)
    p = DuParameters(method="none", epsilon=1.0, delta=1e-5, rounds=3, tolerance=0.0, local_epochs=1,
                     learning_rate=1.0, regularization=0.01, parties=3, dimension=2, bound=4.0,
                     secure_aggregation=True, honest_fraction=2 / 3, key_id=public.key_id)
    own = {party(i): PartyResources(i, public, shares[i - 1], None, rng.normal(size=(20, 2)),
                                    (rng.random(20) > 0.5).astype(float), test_mode=True) for i in (1, 2, 3)}
    opener = protocol(own.__getitem__)
    model = du_pb2.DuModel(parameters=p.to_proto(), round=0, theta=[0.0] * 3, round_deadline_seconds=30)
    sides = {i: opener.open("du-once", party(i), AGGREGATOR, "model", model) for i in (1, 2, 3)}
    uploads = {i: sides[i].receive(AGGREGATOR, "model", model)[0].body for i in (1, 2, 3)}

    def request(round_number, senders):
        return du_pb2.DuDecryptionRequest(round=round_number, request=threshold_sum_pb2.DecryptionRequest(
            contributions=[threshold_sum_pb2.Contribution(sender=i, ciphertexts=uploads[i].encrypted,
                                                          signature=uploads[i].signature) for i in senders]))

    assert sides[1].receive(AGGREGATOR, "decryption_request", request(0, (1, 2)))  # round 0, once
    for again in (request(0, (1, 3)), request(0, (1, 2)), request(1, (1, 2))):
        with pytest.raises(ProtocolError):
            sides[1].receive(AGGREGATOR, "decryption_request", again)
    assert sides[1].decrypted == {0} and sides[1].next_round == 1 and sides[1].state.name == "TRAINING"


def test_charlie_gets_no_more_than_a_tournaments_k_minus_1_comparisons(keypair, monkeypatch):
    """An active Charlie, once his knockout has a winner, keeps asking the Pathak leader for comparisons of every
    pair not yet compared, a disjoint round at a time: K(K − 1)/2 comparison bits where the threat-model page
    promises at most K − 1 (and the leader's work grows with K², not K). The leader answers at most K − 1."""
    import random

    import numpy as np

    from curator.pathak import PathakCuratorSide
    from mpdp.proto.v1 import pathak_pb2
    from mpdp.protocols.pathak.parameters import PathakParameters
    from tests.pathak_router import run

    sizes = [70, 40, 90, 60]
    data = datasets.load("breast-cancer")
    bounds = np.cumsum([0] + sizes)
    parts = [(data.features[a:b], data.labels[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    parameters = PathakParameters(epsilon=1.0, delta=1e-5, regularization=0.05, mechanism="l2-laplace",
                                  calibration="tight", parties=len(sizes), dimension=30, noise_seed=11)
    honest_next_round, honest_compare = PathakCuratorSide._step_next_round, PathakCuratorSide._compare

    def recorded(self, i: int, m: int):
        self.__dict__.setdefault("asked", set()).add((min(i, m), max(i, m)))
        return honest_compare(self, i, m)

    def every_pair(self, out) -> bool:
        if self.winner is None:
            return honest_next_round(self, out)
        if self.pending:
            return False
        asked = self.__dict__.setdefault("asked", set())
        round_pairs, used = [], set()
        for i in range(1, self.parameters.parties + 1):
            for m in range(i + 1, self.parameters.parties + 1):
                if (i, m) not in asked and not {i, m} & used:
                    round_pairs.append((i, m))
                    used |= {i, m}
        if not round_pairs:
            return False
        self._emit(out, party(1), "compare_request",
                   pathak_pb2.CompareRound(comparisons=[self._compare(i, m) for i, m in round_pairs]))
        return True

    monkeypatch.setattr(PathakCuratorSide, "_step_next_round", every_pair)
    monkeypatch.setattr(PathakCuratorSide, "_compare", recorded)
    parties, _ = run(parameters, parts, keypair, random.Random(5))
    leader = parties[party(1)]
    assert len(leader.compared) <= len(sizes) - 1, f"the leader answered {len(leader.compared)} comparisons"


@pytest.mark.parametrize("method", ["dealer", "distributed"])
def test_no_key_is_made_with_a_threshold_that_does_not_bound_decryption(tmp_path, monkeypatch, method):
    """The same key through the launcher: `keygen`/`prepare --threshold 1` would hand every holder, the malicious
    party included, a share that decrypts alone; t ≤ (ℓ + 1)/2 lets two subsets of one sum be decrypted with the
    malicious party's share in both. Refused before any file exists."""
    from launcher.deployment import distributed_keygen, keygen

    monkeypatch.setattr(distributed_keygen, "_spawn", lambda *a: pytest.fail("a holder was started"))
    for t in (1, 2, 3):  # 3 of 5: two sets of three holders share one, and it may be the malicious party
        with pytest.raises(ValueError, match="threshold"):
            keygen.ceremony(5, tmp_path / "keys", BITS, threshold=t, method=method)
        with pytest.raises(ValueError, match="threshold"):
            processes.prepare(tmp_path / "run", 5, BITS, datasets.load("breast-cancer"),
                              processes.loopback_addresses(5, {}), seed=3, threshold=t, keygen=method)
    assert not list(tmp_path.rglob("*.json")) and not list(tmp_path.rglob("*.npz"))
