"""Pathak's state machines in one process (random delivery order), and their building blocks."""

import math
import random
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import chi2_contingency, chisquare

from mpdp.cryptocore.comparison.elgamal import ElGamalKeyPair
from mpdp.cryptocore.comparison.group import P as GROUP_P
from mpdp.learning import datasets
from mpdp.privacy.mechanisms import OutputPerturbation, analytic_gaussian_delta
from mpdp.protocols.pathak import permutation, ring
from mpdp.protocols.pathak.parameters import PathakParameters
from mpdp.protocols.pathak.reference import perturbed_average, smallest_party
from mpdp.sessions.errors import Kind, ProtocolError
from mpdp.sessions.identity import CLIENT, party
from tests.pathak_router import reconstruct, run

COMPARISON_KEY = ElGamalKeyPair.generate().public.to_bytes()
SIZES = [70, 40, 90, 60]  # party 2 is the smallest


@pytest.fixture(scope="module")
def parts():
    data = datasets.load("breast-cancer")
    bounds = np.cumsum([0] + SIZES)
    return [(data.features[a:b], data.labels[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def _parameters(**overrides):
    options = dict(epsilon=1.0, delta=1e-5, regularization=0.05, mechanism="l2-laplace", calibration="tight",
                   parties=len(SIZES), dimension=30, noise_seed=11)
    options.update(overrides)
    return PathakParameters(**options)


def test_random_delivery_order_gives_the_reference_result(parts, keypair):
    parameters = _parameters()
    parties, curator = run(parameters, parts, keypair, random.Random(5))
    assert curator.state.name == "DONE" and all(p.state.name == "DONE" for p in parties.values())
    w = reconstruct([*parties.values(), curator], parameters)
    expected = perturbed_average([p.drawn.model for p in parties.values()], [p.drawn.noise for p in parties.values()], SIZES, 32)
    assert np.array_equal(w, expected)
    # Charlie's comparison output is K − 1 bits, and the bracket's winner is the smallest party's position.
    assert len(curator.comparison_bits_seen) == len(SIZES) - 1 and not curator.pending
    smallest = smallest_party(SIZES)
    assert curator.pi2[parties[party(smallest)].pi1[smallest - 1] - 1] == curator.winner



def test_a_finished_party_keeps_none_of_its_inputs(parts, keypair):
    """After Stage 3 a party holds only its published share: not its model, its noise, n_j's shares, what was
    routed to it or the additive shares it received (test mode keeps a copy in `drawn`, for the checks above)."""
    parameters = _parameters()
    parties, curator = run(parameters, parts, keypair, random.Random(7))
    assert all(p.state.name == "DONE" for p in parties.values())
    for side in [*parties.values(), curator]:
        assert side.published is not None
        assert side.own_vector is None and side.own_share is None and not side.shares
    for side in parties.values():
        assert side.inputs is None
        assert side.routed is None and side.masked_share is None and side.indicator_element is None

def _charlie_guesses(parts, keypair, sessions: int, smallest: int, rng: random.Random):
    """π1-positions of the smallest party, and what guesses built from Charlie's log name."""
    k = len(parts)
    positions, guesses = Counter(), {name: Counter() for name in GUESSES}
    for _ in range(sessions):
        parties, curator = run(_parameters(), parts, keypair, rng, stop_when=lambda c: "blind" in c.done_steps)
        positions[parties[party(smallest)].pi1[smallest - 1]] += 1
        arrivals = [(at, sender) for at, sender, kind in curator.log if kind == "stage1_element"]
        assert sorted(s for _, s in arrivals) == [str(party(j)) for j in range(1, k + 1)]  # one per index holder
        gaps = [later[0] - earlier[0] for earlier, later in zip(arrivals, arrivals[1:])]
        named = {"first to arrive": arrivals[0][1], "last to arrive": arrivals[-1][1],
                 "after the longest pause": arrivals[1 + int(np.argmax(gaps))][1]}
        for name, guess in named.items():
            guesses[name][int(guess.split("/")[1])] += 1
    return positions, guesses


GUESSES = ("first to arrive", "last to arrive", "after the longest pause")


def test_charlie_cannot_tell_which_party_is_smallest(parts, keypair):
    """200 sessions with party 2 smallest: its π1-position is uniform, and every guess Charlie can build
    from its log (peer identities, arrival order, timing) behaves as in 100 sessions where party 3 is
    smallest instead — the log does not depend on who is smallest, so no guess beats chance.

    (A guess's own distribution need not be uniform: the leader's element, for instance, comes first.)"""
    k = len(SIZES)
    rng = random.Random(2026)
    positions, guesses = _charlie_guesses(parts, keypair, 200, smallest=2, rng=rng)
    assert chisquare([positions[p] for p in range(1, k + 1)]).pvalue > 1e-3
    swapped = [parts[0], parts[2], parts[1], parts[3]]  # now party 3 is smallest
    _, guesses_swapped = _charlie_guesses(swapped, keypair, 100, smallest=3, rng=rng)
    for name in GUESSES:
        table = [[guesses[name][j] for j in range(1, k + 1)], [guesses_swapped[name][j] for j in range(1, k + 1)]]
        table = [[a, b] for a, b in zip(*table) if a + b]  # drop parties a guess never names
        assert chi2_contingency(np.array(table).T).pvalue > 1e-3, (name, table)


def test_commit_reveal_permutation():
    seeds = [permutation.new_seed()[0] for _ in range(5)]
    pi = permutation.permutation(seeds, 5)
    assert sorted(pi) == [1, 2, 3, 4, 5] and permutation.permutation(seeds, 5) == pi
    assert permutation.inverse(pi)[pi[0] - 1] == 1
    seed, nonce = permutation.new_seed()
    assert permutation.opens(permutation.commitment(seed, nonce), seed, nonce)
    assert not permutation.opens(permutation.commitment(seed, nonce), seed, bytes(32))
    counts = Counter(tuple(permutation.permutation([permutation.new_seed()[0]], 3)) for _ in range(1200))
    assert len(counts) == 6 and chisquare(list(counts.values())).pvalue > 1e-3


def test_ring_shares_reconstruct_signed_vectors():
    values = [5, -7, 2**100, -(2**100), 0]
    shares = ring.split(values, 6)
    assert ring.decode_signed(ring.add(shares)) == values
    assert ring.from_bytes(ring.to_bytes(shares[0]), 5) == shares[0]
    with pytest.raises(Exception):
        ring.from_bytes(ring.to_bytes(shares[0])[:-1], 5)


def test_ranges():
    assert _parameters(parties=5).comparison_bits == 36 and _parameters(parties=8).comparison_bits == 36
    assert _parameters(parties=3).comparison_bits == 35
    assert _parameters().tie_broken(2, 40) == 40 * 4 + 1
    with pytest.raises(Exception):
        _parameters().tie_broken(1, 2**32)
    with pytest.raises(Exception):
        _parameters(mechanism="laplace")


@pytest.mark.parametrize("mechanism", ["laplace-paper", "l2-laplace", "gaussian"])
def test_noise_on_the_grid_is_clamped_and_scaled(mechanism):
    noise = OutputPerturbation(mechanism, "tight", 1.0, 1e-5, 0.05, 4, 30)
    sums = np.array([noise.sample(40, random.Random(seed)) for seed in range(60)])
    assert np.all(np.abs(sums) <= noise.clamp_bound_grid)
    draws = sums / (4 * 2**32)  # ζ is the sum's noise: η = ζ/(K·2^F)
    expected_norm = {"laplace-paper": math.sqrt(2 * 30) * noise.scale(40),
                     "l2-laplace": 30 * noise.scale(40),
                     "gaussian": math.sqrt(30) * noise.scale(40)}[mechanism]
    assert 0.8 < np.linalg.norm(draws, axis=1).mean() / expected_norm < 1.2


def test_calibrations_and_reported_epsilon():
    paper = OutputPerturbation("laplace-paper", "paper", 1.0, 1e-5, 1.0, 5, 123)
    tight = OutputPerturbation("laplace-paper", "tight", 1.0, 1e-5, 1.0, 5, 123)
    assert tight.scale(100) == pytest.approx(paper.scale(100) / 5)
    assert paper.report()["epsilon_effective"] == pytest.approx(math.sqrt(123) / 5)  # ≈ 2.2 ε
    assert tight.report()["epsilon_effective"] == pytest.approx(math.sqrt(123))
    gaussian = OutputPerturbation("gaussian", "tight", 1.0, 1e-5, 1.0, 5, 123)
    sigma = gaussian.scale(100)
    assert analytic_gaussian_delta(gaussian.sensitivity(100), sigma, 1.0) == pytest.approx(1e-5, rel=1e-3)
    assert gaussian.report(100)["epsilon_effective"] == pytest.approx(1.0, rel=1e-3)


@pytest.mark.parametrize("mechanism", ["laplace-paper", "l2-laplace", "gaussian"])
@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_every_mechanism_reports_what_it_delivers(mechanism, calibration):
    """ε effective for every pair (gaussian/paper too), δ with the clamp's (1 + e^ε)·Pr[clamp]."""
    noise = OutputPerturbation(mechanism, calibration, 2.0, 1e-6, 0.01, 5, 123)
    report = noise.report()
    expected = {("laplace-paper", "paper"): 2.0 * math.sqrt(123) / 5, ("laplace-paper", "tight"): 2.0 * math.sqrt(123),
                ("l2-laplace", "paper"): 2.0 / 5, ("l2-laplace", "tight"): 2.0}.get((mechanism, calibration))
    if expected is not None:
        assert report["epsilon_effective"] == pytest.approx(expected, rel=1e-9)
    elif calibration == "tight":
        assert report["epsilon_effective"] == pytest.approx(2.0, rel=1e-3)
    else:  # σ calibrated to K times the sensitivity the sum really has
        assert report["epsilon_effective"] < 2.0 / 4
    assert report["clamp_delta"] == pytest.approx(2.0**-40)
    assert report["delta"] >= report["clamp_delta"] + (1e-6 if mechanism == "gaussian" else 0)
    # The rounding term √d·2^−F is part of the sensitivity.
    assert noise.model_sensitivity(100) == pytest.approx(2 / (100 * 0.01) + 2e-6 / 0.01 + math.sqrt(123) * 2.0**-32)


def test_clamp_keeps_its_promise_at_large_epsilon():
    """The clamp tail includes 1/(1 + e^ε), so the δ it costs stays at 2^−σ even at ε = 100 (no overflow)."""
    for mechanism in ("laplace-paper", "l2-laplace", "gaussian"):
        noise = OutputPerturbation(mechanism, "tight", 100.0, 1e-5, 0.01, 5, 123)
        report = noise.report()
        assert math.isfinite(report["epsilon_effective"]) and report["delta"] < 1e-4
    with pytest.raises(ValueError):
        OutputPerturbation("gaussian", "tight", 1000.0, 1e-5, 0.01, 5, 123)
    with pytest.raises(Exception):
        _parameters(epsilon=709.0)
    with pytest.raises(Exception):
        _parameters(fractional_bits=8)  # the rounding term needs a fine grid


@pytest.mark.parametrize("mechanism", ["laplace-paper", "l2-laplace", "gaussian"])
def test_sum_noise_is_not_on_a_coset_of_k(mechanism):
    """The noise of the sum is drawn on the integer grid itself: its residues mod K are uniform
    (K times a coarser sample would always be 0 mod K)."""
    k = 5
    noise = OutputPerturbation(mechanism, "tight", 1.0, 1e-5, 0.05, k, 1)
    residues = Counter(noise.sample(40, random.Random(seed))[0] % k for seed in range(1000))
    assert chisquare([residues[r] for r in range(k)]).pvalue > 1e-4, residues


def test_release_mod_k_is_uniform_over_sessions(parts, keypair):
    """The attack of the review: over repeated sessions on the *same* data, the released K·2^F·ŵˢ mod K
    must be uniform per coordinate; with noise on a coset of Kℤ it equals the noise-free residue every time.
    Seeded noise streams make the test deterministic; the release is also checked against the reference."""
    sizes, k = SIZES[:3], 3
    parameters = [_parameters(parties=k, noise_seed=seed) for seed in range(1, 31)]
    residues = np.zeros((len(parameters), 30), dtype=int)
    for index, session_parameters in enumerate(parameters):
        parties, curator = run(session_parameters, parts[:k], keypair, random.Random(index))
        release = ring.decode_signed(ring.add([m.published for m in [*parties.values(), curator]]))
        residues[index] = np.array(release) % k
        if index < 2:
            expected = perturbed_average([p.drawn.model for p in parties.values()], [p.drawn.noise for p in parties.values()],
                                         sizes, 32)
            assert np.array_equal(np.array(release, dtype=float) / 2**32 / k, expected)
    p_values = [chisquare(np.bincount(residues[:, i], minlength=k)).pvalue for i in range(30)]
    assert min(p_values) > 1e-4 / 30, sorted(p_values)[:3]
    assert chisquare(np.bincount(residues.ravel(), minlength=k)).pvalue > 1e-3


def test_a_party_below_n_min_refuses_the_session(parts, keypair):
    """n_min is a promise about every party: the clamp bound and δ rely on it."""
    from party.pathak import PathakFollowerSide

    features, labels = parts[1]  # 40 rows
    with pytest.raises(ProtocolError) as refused:
        PathakFollowerSide("s", 2, _parameters(n_min=41), features, labels, 1024, test_mode=True)
    assert refused.value.kind is Kind.FAILED_PRECONDITION and "n_min" in str(refused.value)
    PathakFollowerSide("s", 2, _parameters(n_min=40), features, labels, 1024, test_mode=True)


def test_steps_before_their_prerequisites_are_out_of_order(parts, keypair):
    """An `indicator` or `selected_noise` before Charlie's key: FAILED_PRECONDITION, not an AttributeError."""
    from mpdp.proto.v1 import common_pb2, pathak_pb2
    from mpdp.sessions.identity import CLIENT, CURATOR
    from party.pathak import PathakLeaderSide

    features, labels = parts[0]
    leader = PathakLeaderSide("s", 1, _parameters(), features, labels, 1024, test_mode=True)
    leader.receive(CLIENT, "start", common_pb2.Empty())
    ciphertexts = common_pb2.Ciphertexts(key_id=keypair.public.key_id, values=[b"\x01" * 256] * len(SIZES))
    for sender, kind, body in ((CURATOR, "indicator", ciphertexts), (party(2), "selected_noise", ciphertexts),
                               (party(1), "indicator_element", b"\x01" * 256)):
        with pytest.raises(ProtocolError) as refused:
            leader.receive(sender, kind, body)
        assert refused.value.kind in (Kind.FAILED_PRECONDITION, Kind.PERMISSION_DENIED), (kind, refused.value)
    compare = pathak_pb2.CompareRound(comparisons=[pathak_pb2.CompareRequest(pair=pathak_pb2.ComparePair(first=1, second=2))])
    with pytest.raises(ProtocolError) as refused:
        leader.receive(CURATOR, "compare_request", compare)
    assert refused.value.kind is Kind.FAILED_PRECONDITION


def test_the_leader_and_a_follower_each_take_only_their_own_kinds(parts, keypair):
    """Party 1 leads; the leader's kinds at a follower, and ξ dealt to the leader, are refused and change nothing."""
    from mpdp.proto.v1 import common_pb2, pathak_pb2
    from mpdp.sessions.identity import CLIENT, CURATOR
    from party.pathak import PathakFollowerSide, PathakLeaderSide

    features, labels = parts[0]
    with pytest.raises(ProtocolError):
        PathakLeaderSide("s", 2, _parameters(), features, labels, 1024, test_mode=True)
    with pytest.raises(ProtocolError):
        PathakFollowerSide("s", 1, _parameters(), features, labels, 1024, test_mode=True)
    leader = PathakLeaderSide("s", 1, _parameters(), features, labels, 1024, test_mode=True)
    follower = PathakFollowerSide("s", 2, _parameters(), features, labels, 1024, test_mode=True)
    for side in (leader, follower):
        side.receive(CLIENT, "start", common_pb2.Empty())
    leader_only = [(party(3), "barrier_ready", common_pb2.Empty()), (party(3), "masked_value", b"\x01"),
                   (CURATOR, "compare_request", pathak_pb2.CompareRound()), (CURATOR, "indicator", pathak_pb2.Indicator()),
                   (party(3), "selected_noise", common_pb2.Ciphertexts())]
    for side, refused_kinds in ((follower, leader_only),
                                (leader, [(party(2), "party_key", pathak_pb2.PaillierSecretKeyMessage()),
                                          (party(2), "barrier_release", common_pb2.Empty())])):
        for sender, kind, body in refused_kinds:
            with pytest.raises(ProtocolError) as refused:
                side.receive(sender, kind, body)
            assert refused.value.kind is Kind.INVALID_ARGUMENT and f"takes no '{kind}'" in str(refused.value)
    assert follower.masked_share is None and not leader.barrier_ready and not leader.masked_values
    assert follower.xi is None and not follower.released  # the leader made its own ξ as it started


def test_the_leader_checks_a_round_before_any_work(parts, keypair):
    """Rounds that name a position twice, too many pairs, or none are refused before any exponentiation."""
    from mpdp.proto.v1 import common_pb2, pathak_pb2
    from mpdp.sessions.identity import CLIENT, CURATOR
    from party.pathak import PathakLeaderSide

    features, labels = parts[0]
    leader = PathakLeaderSide("s", 1, _parameters(), features, labels, 1024, test_mode=True)
    leader.receive(CLIENT, "start", common_pb2.Empty())
    leader.zeta, leader.offsets = keypair.public, [0] * len(SIZES)  # as after Charlie's key and the offsets

    def round_of(*pairs):
        return pathak_pb2.CompareRound(comparisons=[
            pathak_pb2.CompareRequest(pair=pathak_pb2.ComparePair(first=i, second=m)) for i, m in pairs])

    for bad in (round_of(), round_of((1, 2), (2, 3)), round_of((1, 2), (3, 4), (5, 1)), round_of((1, 1)),
                round_of((1, 9))):
        with pytest.raises(ProtocolError) as refused:
            leader.receive(CURATOR, "compare_request", bad)
        assert refused.value.kind is Kind.INVALID_ARGUMENT
    assert not leader.compared and not leader._pending_replies


def test_distributed_noise_skips_stage_1_and_every_share_is_in_the_release(parts, keypair):
    """`--noise-source distributed`: no keys, no tournament; the release is the average plus every party's share
    (the in-process reference), and Charlie only ever receives additive shares."""
    from mpdp.protocols.pathak.reference import distributed_average

    parameters = _parameters(mechanism="gaussian", noise_source="distributed", calibrate_to="n_min", n_min=40)
    parties, curator = run(parameters, parts, keypair, random.Random(9))
    assert curator.state.name == "DONE" and all(p.state.name == "DONE" for p in parties.values())
    w = reconstruct([*parties.values(), curator], parameters)
    expected = distributed_average([p.drawn.model for p in parties.values()], [p.drawn.noise for p in parties.values()], 32)
    assert np.array_equal(w, expected)
    assert {kind for _, _, kind in curator.log} == {"open", "start", "share"}
    assert all(p.xi is None and p.pi1 is None for p in parties.values())
    assert len({tuple(p.drawn.noise) for p in parties.values()}) == len(SIZES)  # independent shares


def test_one_party_removing_its_own_share_still_leaves_the_calibrated_noise():
    """The attack the selected-noise protocol allows (pathak.md): the party whose noise was selected subtracts
    it and holds the un-noised average. With distributed shares, a party that subtracts its own share still faces
    K − 1 shares, whose sum has at least the variance the accounting counts; the guarantee holds for it."""
    parameters = _parameters(mechanism="gaussian", noise_source="distributed", calibrate_to="n_min", n_min=40,
                             dimension=30)
    noise = parameters.distributed_noise
    rng = random.Random(4)
    shares = np.array([[noise.sample(rng) for _ in range(len(SIZES))] for _ in range(40)])  # runs × K × d
    residual = shares.sum(axis=1) - shares[:, 0, :]  # what party 1 cannot remove
    counted_std = math.sqrt(float(noise.share_variance) * (len(SIZES) - 1))
    assert residual.std() == pytest.approx(counted_std, rel=0.05)
    # The counted shares alone give (ε, δ) for the sum's sensitivity, and the ledger charges that.
    sensitivity = parameters.noise.sensitivity(40) * parameters.parties * 2**32
    assert noise.epsilon_for(sensitivity) <= parameters.epsilon * (1 + 1e-9)
    assert parameters.guarantee().epsilon <= parameters.epsilon * (1 + 1e-9)
    # Selected noise, by contrast: the smallest party knows all of η.
    selected = _parameters(mechanism="gaussian")
    assert selected.distributed_noise is None


def test_distributed_noise_is_calibrated_like_a_gaussian_of_k_minus_1_shares():
    """Independently: the K − 1 counted shares' total σ is within 15 % above the analytic Gaussian σ for the same
    (ε, δ) (zCDP's conversion is looser), never below it."""
    from mpdp.privacy.mechanisms import analytic_gaussian_sigma

    parameters = _parameters(mechanism="gaussian", noise_source="distributed", calibrate_to="n_min", n_min=40)
    noise = parameters.distributed_noise
    total = math.sqrt(float(noise.share_variance) * noise.counted)
    analytic = analytic_gaussian_sigma(noise.sensitivity, parameters.epsilon, parameters.delta)
    assert analytic <= total <= 1.15 * analytic


def test_distributed_noise_needs_gaussian_shares_at_n_min():
    with pytest.raises(ProtocolError, match="mechanism gaussian"):
        _parameters(mechanism="l2-laplace", noise_source="distributed", calibrate_to="n_min")
    with pytest.raises(ProtocolError, match="n_min"):
        _parameters(mechanism="gaussian", noise_source="distributed", calibrate_to="n_1")


def test_calibrate_to_n_min_uses_the_public_bound_not_the_party_size():
    """`--calibrate-to n_min`: the selected party's noise scale is the one at n_min whatever its n_j, so the
    release's noise magnitude says nothing about n_(1)."""
    parameters = _parameters(calibrate_to="n_min", n_min=20)
    assert parameters.noise_records(70) == parameters.noise_records(40) == 20
    assert _parameters().noise_records(70) == 70
    draws = [parameters.draw_noise(records, random.Random(3)) for records in (40, 90)]
    assert draws[0] == draws[1]


def _charlie_sends_indicator(monkeypatch, plaintexts):
    """An active Charlie: his Stage 2 indicator encrypts `plaintexts(K, winner position, n)` instead of e_j̃, with
    a correct opening of the product's plaintext and his best bit proofs (honest ones where an entry is a bit)."""
    from curator.pathak import PathakCuratorSide
    from mpdp.cryptocore.paillier import ciphertext as ct
    from mpdp.cryptocore.proofs.bit_proof import prove_bits
    from mpdp.cryptocore.proofs.plaintext_opening import open_ciphertext
    from mpdp.proto.v1 import pathak_pb2
    from mpdp.protocols.pathak.indicator import bit_proof_message, indicator_context

    def forged(self, out):
        if self.winner is None or not self._once("indicator"):
            return False
        public = self.zeta.public
        n = public.n
        entries = plaintexts(self.parameters.parties, self.pi2.index(self.winner), n)
        values = [(1 + v % n * n) * public.encryptor.random_zero() % (n * n) for v in entries]  # any residue
        proofs = prove_bits(self.zeta, values, [v if v in (0, 1) else 0 for v in entries],
                            indicator_context(self.session_id))
        width = ct.modulus_bytes(public.paillier)
        self._emit(out, party(1), "indicator", pathak_pb2.Indicator(
            key_id=public.key_id, values=[ct.to_bytes(public.paillier, v) for v in values],
            opening=open_ciphertext(self.zeta, ct.add(public.paillier, *values), sum(entries) % n).to_bytes(width, "big"),
            proofs=[bit_proof_message(proof, width) for proof in proofs]))
        return True

    monkeypatch.setattr(PathakCuratorSide, "_step_indicator", forged)


def _half(n):
    return (n + 1) // 2  # 1/2 mod n: two of them average two parties' noise where the packed sum is even


@pytest.mark.parametrize("plaintexts, refusal", [
    (lambda k, w, n: [0] * k, "sum to one"),  # no noise at all: the release would be the plain average
    (lambda k, w, n: [1] * k, "sum to one"),  # every party's noise
    (lambda k, w, n: [int(i == w) for i in range(k)][:-1] + [0 if w == k - 1 else -1], "sum to one"),
    (lambda k, w, n: [_half(n), _half(n)] + [0] * (k - 2), "bits"),  # sums to one: smaller noise
    (lambda k, w, n: [2, -1] + [0] * (k - 2), "bits"),  # sums to one: 2·ζ_1 − ζ_2
], ids=["zeros", "ones", "sums-to-zero", "halves", "two-minus-one"])
def test_an_indicator_that_is_not_a_unit_vector_is_refused_by_the_leader(parts, keypair, monkeypatch, plaintexts,
                                                                        refusal):
    """The attack: Charlie's indicator selects no noise (the release would be the plain average), several, or
    fractions of two (the average of their noise, smaller than one party's where the packed sum divides). The
    leader checks Charlie's opening of the product (an encryption of 1) and a proof per entry that it is a bit;
    the session aborts and nothing is published."""
    from mpdp.proto.v1 import common_pb2
    from tests.pathak_router import network

    _charlie_sends_indicator(monkeypatch, plaintexts)
    net = network(_parameters(), parts, keypair, random.Random(5))
    for identity in list(net.registries):
        net.send(CLIENT, identity, "pathak", "start", common_pb2.Empty())
    net.run()
    assert [(receiver, label) for _, receiver, label, reason in net.refused if refusal in reason] == \
        [(party(1), "Step/pathak/indicator")]
    # (over the network the refusal aborts the session everywhere; the twin only records it)
    assert net.sides[party(1)].indicator is None and not any(side.published for side in net.sides.values())


def test_an_honest_indicator_passes_the_same_forger(parts, keypair, monkeypatch):
    """The forger above with e_j̃ itself: accepted, so the refusals are about the plaintexts."""
    from mpdp.proto.v1 import common_pb2
    from tests.pathak_router import network

    _charlie_sends_indicator(monkeypatch, lambda k, w, n: [int(i == w) for i in range(k)])
    net = network(_parameters(), parts, keypair, random.Random(5))
    for identity in list(net.registries):
        net.send(CLIENT, identity, "pathak", "start", common_pb2.Empty())
    net.run()
    assert not net.refused and all(side.published for side in net.sides.values())


def _leader_keys(side, bits: int = 1024):
    """The leader's party_key (ξ and its ring-Pedersen parameters) delivered to a non-leader `side`; the
    parameters' secret, which the leader's process holds."""
    from mpdp.cryptocore.paillier.keypair import generate_keypair
    from mpdp.cryptocore.proofs import ring_pedersen
    from mpdp.proto.v1 import pathak_pb2
    from mpdp.protocols.pathak.keys import ring_pedersen_message
    from mpdp.sessions.integers import int_to_bytes

    setup, _ = ring_pedersen.held(bits)
    xi = generate_keypair(bits)
    side.receive(party(1), "party_key", pathak_pb2.PaillierSecretKeyMessage(
        p=int_to_bytes(xi.private.p), q=int_to_bytes(xi.private.q), hs=int_to_bytes(xi.public.hs),
        ring_pedersen=ring_pedersen_message(setup.public)))
    return setup


def _curator_keys(keypair, setup, comparison_key=None):
    from mpdp.proto.v1 import pathak_pb2
    from mpdp.protocols.pathak.keys import factor_proof_message, proven_key_message

    return pathak_pb2.CuratorKeys(zeta=proven_key_message(keypair), comparison_key=comparison_key or COMPARISON_KEY,
                                  factor_proof=factor_proof_message(keypair.private.p, keypair.private.q, setup.public))


def test_a_party_takes_charlies_key_only_with_a_proof_that_it_is_a_two_prime_modulus(parts, keypair, monkeypatch):
    """Without Π^mod an owner could use n with more factors (a zero test per factor in every comparison answer)
    and the indicator's opening would not pin its plaintext. A key without the proof, or with another key's,
    is refused before anything is encrypted under it."""
    from mpdp.cryptocore.errors import InvalidKey
    from mpdp.cryptocore.paillier.keypair import generate_keypair
    from mpdp.cryptocore.proofs import modulus_proof, ring_pedersen
    from mpdp.proto.v1 import common_pb2
    from mpdp.protocols.pathak.keys import proven_key_message, public_key_message
    from mpdp.sessions.identity import CURATOR
    from party.pathak import PathakFollowerSide

    monkeypatch.setattr(modulus_proof, "_verified", type(modulus_proof._verified)())
    other = generate_keypair(1024)
    borrowed = proven_key_message(other)
    borrowed.n, borrowed.hs = public_key_message(keypair.public).n, public_key_message(keypair.public).hs
    features, labels = parts[0]
    for message in (public_key_message(keypair.public), borrowed):
        side = PathakFollowerSide("s", 2, _parameters(), features, labels, 1024, test_mode=True)
        side.receive(CLIENT, "start", common_pb2.Empty())
        setup = _leader_keys(side)
        keys = _curator_keys(keypair, setup)
        keys.zeta.CopyFrom(message)
        with pytest.raises(InvalidKey):
            side.receive(CURATOR, "curator_key", keys)
        assert side.zeta is None
    side = PathakFollowerSide("s", 2, _parameters(), features, labels, 1024, test_mode=True)
    side.receive(CLIENT, "start", common_pb2.Empty())
    side.receive(CURATOR, "curator_key", _curator_keys(keypair, ring_pedersen.held(1024)[0]))
    assert side.zeta is None  # Charlie's keys wait for the leader's parameters, which Π^fac is checked against
    _leader_keys(side)
    assert side.zeta == keypair.public


def test_a_party_refuses_charlies_key_with_a_small_factor(parts, keypair):
    """The attack Π^fac stops: n = p·q with p a Blum prime just above 2^16 passes every other check (Π^mod
    included), and with it Charlie could forge the indicator's bit proofs modulo p in about 2^17 tries. The
    honest prover's z₂ = β + e·q then exceeds √n·2^(ℓ+ε), and a proof made against other parameters, or none,
    is refused too."""
    import gmpy2

    from mpdp.cryptocore.arithmetic import primes
    from mpdp.cryptocore.errors import InvalidKey
    from mpdp.cryptocore.paillier.fast_encryption import generate_hs
    from mpdp.cryptocore.paillier.keypair import KeyPair, PaillierPrivateKey, PaillierPublicKey, PublicKey
    from mpdp.cryptocore.proofs import modulus_proof, ring_pedersen
    from mpdp.proto.v1 import common_pb2
    from mpdp.sessions.identity import CURATOR
    from party.pathak import PathakFollowerSide

    small = int(gmpy2.next_prime(2**16 + 100))
    while small % 4 != 3:
        small = int(gmpy2.next_prime(small))
    while True:
        large = primes.blum_prime(1024 - small.bit_length())
        if (small * large).bit_length() == 1024:
            break
    n = small * large
    public = PublicKey.from_integers(n, generate_hs(PaillierPublicKey(n)), 1024)
    weak = KeyPair(public, PaillierPrivateKey(public.paillier, small, large))
    modulus_proof.verify(n, modulus_proof.prove(small, large))  # every check before Π^fac passes
    features, labels = parts[0]
    elsewhere = ring_pedersen.generate(1024)
    cases = ((lambda setup: _curator_keys(weak, setup), "z2 is out of range"),  # a weak modulus, honestly proven
             (lambda setup: _curator_keys(keypair, elsewhere), "no-small-factor proof|two large prime factors"),
             (lambda setup: _without_factor_proof(_curator_keys(keypair, setup)), "five commitments"))
    for make, reason in cases:
        side = PathakFollowerSide("s", 2, _parameters(), features, labels, 1024, test_mode=True)
        side.receive(CLIENT, "start", common_pb2.Empty())
        setup = _leader_keys(side)
        with pytest.raises((InvalidKey, ProtocolError), match=reason):
            side.receive(CURATOR, "curator_key", make(setup))
        assert side.zeta is None


def test_charlie_takes_the_leaders_parameters_only_with_a_proof_that_s_is_in_the_group_of_t(keypair):
    """Charlie commits to ζ's factors under the leader's ring-Pedersen parameters: with s outside ⟨t⟩ (and N̂'s
    group orders smooth, which the leader could choose) s^p would give the leader p. Without Π^prm, or with one
    made for −s (−1 is a non-square modulo a safe prime, so −s ∉ ⟨t⟩), Charlie refuses before it proves
    anything."""
    from curator.pathak import PathakCuratorSide
    from mpdp.cryptocore.errors import InvalidKey
    from mpdp.cryptocore.paillier.keypair import generate_keypair
    from mpdp.cryptocore.proofs import ring_pedersen
    from mpdp.protocols.pathak.keys import public_key_message, ring_pedersen_message

    secret, _ = ring_pedersen.held(1024)
    public = secret.public
    outside = ring_pedersen.RingPedersen(public.modulus, public.modulus - public.s, public.t)
    forged = ring_pedersen.prove(ring_pedersen.RingPedersenSecret(outside, secret.phi, secret.exponent))
    xi = generate_keypair(1024)
    padded = ring_pedersen_message(public, ring_pedersen.held(1024)[1])
    padded.commitments.extend([b"\x01"] * 100_000)  # refused by its count, before anything is parsed
    for setup, reason in ((ring_pedersen_message(public), "80 rounds"), (padded, "80 rounds"),
                          (ring_pedersen_message(outside, forged), "not shown to have s")):
        charlie = PathakCuratorSide("s", _parameters(), keypair, ElGamalKeyPair.generate())
        message = public_key_message(xi.public)
        message.ring_pedersen.CopyFrom(setup)
        with pytest.raises((InvalidKey, ProtocolError), match=reason):
            charlie.receive(party(1), "party_public_key", message)
        assert charlie.xi is None and charlie.ring_pedersen is None


def _without_factor_proof(message):
    message.ClearField("factor_proof")
    return message


@pytest.mark.parametrize("name, key", [
    ("one", (1).to_bytes(256, "big")),
    ("outside the subgroup of order q", (2).to_bytes(256, "big")),  # 2 generates far more than the subgroup
    ("p itself", GROUP_P.to_bytes(256, "big")),
    ("short", b"\x05" * 255),
])
def test_a_party_refuses_a_comparison_key_outside_the_group(parts, keypair, name, key):
    """An owner's h with a small-order part would let the leader's answers carry r_i modulo that order; h = 1
    would make every re-randomiser (g^s, 1) leave the plaintext readable. Checked in public, before ζ."""
    from mpdp.cryptocore.errors import InvalidKey
    from mpdp.proto.v1 import common_pb2, pathak_pb2
    from mpdp.protocols.pathak.keys import proven_key_message
    from mpdp.sessions.identity import CURATOR
    from party.pathak import PathakLeaderSide

    features, labels = parts[0]
    side = PathakLeaderSide("s", 1, _parameters(), features, labels, 1024, test_mode=True)
    side.receive(CLIENT, "start", common_pb2.Empty())
    with pytest.raises(InvalidKey):
        side.receive(CURATOR, "curator_key", pathak_pb2.CuratorKeys(zeta=proven_key_message(keypair), comparison_key=key))
    assert side.zeta is None and side.comparison_key is None


def test_the_leader_takes_masked_values_only_in_the_honest_range(parts):
    """ã_k = a + r lies in [−2^(M+2σ), 2^(M+2σ) + 2^(M+σ)). A wider range would let Charlie send ξ(c·a + r) and
    form c·n′ + ρ_k, learning n′ to within 2^R / c."""
    from mpdp.proto.v1 import common_pb2
    from mpdp.protocols.pathak.encoding import signed_bytes
    from party.pathak import PathakLeaderSide

    parameters = _parameters()
    blind, share = 2**parameters.blind_bits, 2**parameters.share_bits
    features, labels = parts[0]
    leader = PathakLeaderSide("s", 1, parameters, features, labels, 1024, test_mode=True)
    leader.receive(CLIENT, "start", common_pb2.Empty())
    for sender, value in ((2, blind + share), (3, -blind - 1), (4, 2 * blind)):
        with pytest.raises(ProtocolError) as refused:
            leader.receive(party(sender), "masked_value", signed_bytes(value))
        assert refused.value.kind is Kind.INVALID_ARGUMENT
    for sender, value in ((2, blind + share - 1), (3, -blind)):
        leader.receive(party(sender), "masked_value", signed_bytes(value))
    assert leader.masked_values == {2: blind + share - 1, 3: -blind}


def test_only_the_leaders_host_makes_ring_pedersen_parameters_at_start(monkeypatch):
    """The leader's host starts making them when it starts serving (the start-up hook of the party registry's
    Pathak entry), so the first session need not wait."""
    from mpdp.cryptocore.proofs import ring_pedersen
    from mpdp.sessions.protocol import start_hosts
    from party.registry import protocols

    made = []
    monkeypatch.setattr(ring_pedersen, "prepare", made.append)
    own = {j: SimpleNamespace(public_key=SimpleNamespace(n=2**1023 + 1)) for j in (1, 2, 3)}
    registry = protocols(lambda me: own[me.id])
    start_hosts(registry, {party(2), party(3)})
    assert made == []
    start_hosts(registry, {party(1), party(2)})
    assert made == [1024]
