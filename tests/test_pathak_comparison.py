"""Stage 1 step 6 on short values (mpdp/protocols/pathak/comparison.py): the composition decides n′_i > n′_m exactly, and
what Charlie can form from the leader's masked offsets hides every n′ (statistically, σ bits)."""

import secrets

from hypothesis import example, given, settings
from hypothesis import strategies as st

from mpdp.cryptocore.comparison.elgamal import ElGamalKeyPair
from mpdp.cryptocore.comparison.protocol import ComparisonKeyHolder, ComparisonValueHolder
from mpdp.protocols.pathak import comparison
from mpdp.protocols.pathak.parameters import MAX_RECORDS_BITS, PathakParameters

PARTIES = 5


def _parameters(parties: int = PARTIES) -> PathakParameters:
    return PathakParameters(epsilon=1.0, delta=1e-5, regularization=0.05, mechanism="l2-laplace",
                            calibration="tight", parties=parties, dimension=3)


def _stage1_values(parameters: PathakParameters, tie_broken: list[int]) -> tuple[list[int], list[int]]:
    """ã_k, b̃_k as Stage 1 leaves them: ã_k + b̃_k = n′_k, each blinded with Charlie's r_k (pathak.md)."""
    bound = 2**parameters.blind_bits
    a = [secrets.randbelow(2**parameters.share_bits) for _ in tie_broken]
    r = [secrets.randbelow(2 * bound) - bound for _ in tie_broken]
    masked = [a_k + r_k for a_k, r_k in zip(a, r)]
    blinded_b = [n - a_k - r_k for n, a_k, r_k in zip(tie_broken, a, r)]
    return masked, blinded_b


def _decide(parameters, masked, blinded_b, i, m, coin: int, dgk=None) -> bool:
    """One comparison as the roles run it: the DGK bracket in the clear, or through `dgk(x, y, reverse)`."""
    offsets = comparison.draw_offsets(parameters)
    w = [a + rho for a, rho in zip(masked, offsets)]
    x, offset_bit = comparison.leader_operand(parameters, offsets, i, m)
    y, charlie_bit = comparison.charlie_operand(parameters, w, blinded_b, i, m)
    assert x % 2 == 0 and y % 2 == 1 and 0 <= x < 2**parameters.comparison_bits and y < 2**parameters.comparison_bits
    flipped = dgk(x, y, bool(coin)) if dgk else (x > y) ^ bool(coin)
    return comparison.bigger_first(charlie_bit, offset_bit ^ coin, flipped)


records = st.integers(min_value=1, max_value=2**MAX_RECORDS_BITS - 1)


@settings(max_examples=300)
@given(records, records, st.integers(0, 1))
@example(1, 1, 0)
@example(1, 2**32 - 1, 1)
@example(2**32 - 1, 1, 0)
@example(2**32 - 1, 2**32 - 1, 1)
def test_the_short_comparison_decides_the_smaller_party_exactly(first, second, coin):
    parameters = _parameters()
    tie_broken = [parameters.tie_broken(1, first), parameters.tie_broken(2, second), *(
        parameters.tie_broken(j, 7) for j in range(3, PARTIES + 1))]
    masked, blinded_b = _stage1_values(parameters, tie_broken)
    assert _decide(parameters, masked, blinded_b, 1, 2, coin) == (tie_broken[0] > tie_broken[1])
    assert _decide(parameters, masked, blinded_b, 2, 1, coin) == (tie_broken[1] > tie_broken[0])


def test_through_the_real_dgk_comparison_in_both_directions():
    parameters = _parameters(32)
    tie_broken = [parameters.tie_broken(j, secrets.randbelow(2**32 - 1) + 1) for j in range(1, 33)]
    masked, blinded_b = _stage1_values(parameters, tie_broken)
    keypair = ElGamalKeyPair.generate()

    def dgk(x, y, reverse):
        holder = ComparisonKeyHolder(keypair, y, parameters.comparison_bits)
        value_holder = ComparisonValueHolder(keypair.public, x, parameters.comparison_bits, reverse=reverse)
        return holder.receive(value_holder.respond(holder.encrypted_bits()))

    for i, m, coin in ((1, 2, 0), (3, 4, 1), (32, 31, 1), (5, 17, 0)):
        assert _decide(parameters, masked, blinded_b, i, m, coin, dgk) == (tie_broken[i - 1] > tie_broken[m - 1])


def test_the_values_are_short():
    """M + 1 = 33 + κ bits where ℓ = 35 + κ + 2σ was compared before (118 for K ≤ 8)."""
    assert _parameters(5).comparison_bits == 36 and _parameters(8).comparison_bits == 36
    assert _parameters(32).comparison_bits == 38 and _parameters(3).comparison_bits == 35


def test_charlies_reconstruction_of_n_prime_fails():
    """The attack: Charlie adds his b̃_k to the leader's w_k. Without the offsets this is n′_k exactly; with them
    its low M bits (all n′ has) are uniform whatever n′_k is, and the top bits carry σ bits of ρ_k."""
    parameters = _parameters()
    m = parameters.difference_bits
    for n_prime in (parameters.tie_broken(1, 1), parameters.tie_broken(1, 2**32 - 1)):
        low_halves = 0
        for _ in range(2000):
            masked, blinded_b = _stage1_values(parameters, [n_prime] * PARTIES)
            offsets = comparison.draw_offsets(parameters)
            formed = masked[0] + offsets[0] + blinded_b[0]  # = n′ + ρ_1
            assert formed != n_prime
            low_halves += (formed % 2**m) < 2 ** (m - 1)
        assert 0.45 < low_halves / 2000 < 0.55


def test_a_round_answered_on_every_core_gives_every_bit():
    """answer_all spreads a round's blinding over threads; each answer still decides its pair."""
    from mpdp.cryptocore.comparison.parallel import ComparisonJob, answer_all
    from mpdp.cryptocore.comparison.protocol import EncryptedBits

    keypair = ElGamalKeyPair.generate()
    bits, cases = 20, [(5, 9, False), (9, 5, False), (5, 9, True), (123456, 123455, True), (0, 2**20 - 1, False)]
    holders, jobs = [], []
    for x, y, reverse in cases:
        holder = ComparisonKeyHolder(keypair, y, bits)
        request = holder.encrypted_bits()
        holders.append(holder)
        jobs.append(ComparisonJob(x, bits, reverse, EncryptedBits(request.key_id, request.ciphertexts, request.proofs)))
    answers = answer_all(keypair.public, jobs)
    assert [h.receive(a) for h, a in zip(holders, answers)] == [(y > x) if r else (x > y) for x, y, r in cases]
