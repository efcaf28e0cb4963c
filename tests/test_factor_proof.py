"""Π^prm (ring-Pedersen parameters) and Π^fac (both factors of a Paillier modulus are large): honest proofs
verify; every forged, tampered or out-of-range one is refused, the long ones before any exponentiation."""

import dataclasses

import gmpy2
import pytest

from mpdp.cryptocore.arithmetic import primes
from mpdp.cryptocore.errors import InvalidKey
from mpdp.cryptocore.proofs import factor_proof, ring_pedersen

BITS = 1024


@pytest.fixture(scope="module")
def setup():
    return ring_pedersen.held(BITS)[0].public


@pytest.fixture(scope="module")
def factors():
    return primes.distinct_prime_pair(BITS // 2, primes.blum_prime)


def _small_and_large(small_bits: int) -> tuple[int, int]:
    """n = p·q of BITS bits with p a prime of `small_bits` bits."""
    small = primes.blum_prime(small_bits)
    while True:
        large = primes.blum_prime(BITS - small_bits)
        if (small * large).bit_length() == BITS:
            return small, large


def test_honest_parameters_verify_and_bind_their_context(setup):
    secret, proof = ring_pedersen.held(BITS)
    ring_pedersen.verify(secret.public, proof, BITS)
    with pytest.raises(InvalidKey):
        ring_pedersen.verify(secret.public, ring_pedersen.prove(secret, b"one"), BITS, b"another")
    with pytest.raises(InvalidKey, match="bits"):
        ring_pedersen.verify(secret.public, proof, 2048)


def test_parameters_with_s_outside_the_group_of_t_are_refused(setup):
    """A prover that knows N̂'s factors but not a λ with s = t^λ passes a round only for the bit it guessed."""
    secret, _ = ring_pedersen.held(BITS)
    public = secret.public
    outside = ring_pedersen.RingPedersen(public.modulus, public.modulus - public.s, public.t)  # −s: a non-square
    cheat = ring_pedersen.RingPedersenSecret(outside, secret.phi, secret.exponent)
    with pytest.raises(InvalidKey, match="not shown"):
        ring_pedersen.verify(outside, ring_pedersen.prove(cheat), BITS)


@pytest.mark.parametrize("change", ["short", "zero commitment", "response too long", "s is one", "t is −1"])
def test_malformed_parameter_proofs_are_refused_before_any_exponentiation(setup, change, monkeypatch):
    secret, proof = ring_pedersen.held(BITS)
    public = secret.public
    if change == "short":
        proof = ring_pedersen.ParameterProof(proof.commitments[1:], proof.responses[1:])
    elif change == "zero commitment":
        proof = ring_pedersen.ParameterProof((0, *proof.commitments[1:]), proof.responses)
    elif change == "response too long":
        proof = ring_pedersen.ParameterProof(proof.commitments, (public.modulus, *proof.responses[1:]))
    elif change == "s is one":
        public = dataclasses.replace(public, s=1)
    else:
        public = dataclasses.replace(public, t=public.modulus - 1)
    monkeypatch.setattr(gmpy2, "powmod_exp_list", None)  # an exponentiation would fail with TypeError
    with pytest.raises(InvalidKey):
        ring_pedersen.verify(public, proof, BITS)


def test_an_honest_factor_proof_verifies(setup, factors):
    p, q = factors
    proof = factor_proof.prove(p, q, setup, b"context")
    factor_proof.verify(p * q, proof, setup, b"context")
    assert factor_proof.smallest_factor_bits(p * q) == 126
    with pytest.raises(InvalidKey):
        factor_proof.verify(p * q, proof, setup, b"another context")


@pytest.mark.parametrize("small_bits", [18, 64, 120])
def test_a_modulus_with_a_small_factor_cannot_be_proven(setup, small_bits):
    """The honest algorithm on n = small·large: z for the large factor exceeds √n·2^(ℓ+ε). Claiming the
    factors swapped, or splitting n unevenly, fails the same range."""
    small, large = _small_and_large(small_bits)
    for first, second in ((small, large), (large, small)):
        with pytest.raises(InvalidKey, match="out of range"):
            factor_proof.verify(small * large, factor_proof.prove(first, second, setup), setup)


def test_a_proof_for_another_modulus_or_other_parameters_is_refused(setup, factors):
    p, q = factors
    proof = factor_proof.prove(p, q, setup)
    other_p, other_q = primes.distinct_prime_pair(BITS // 2, primes.blum_prime)
    with pytest.raises(InvalidKey):
        factor_proof.verify(other_p * other_q, proof, setup)
    elsewhere = ring_pedersen.generate(BITS).public
    with pytest.raises(InvalidKey):
        factor_proof.verify(p * q, proof, elsewhere)


@pytest.mark.parametrize("field", ["P", "Q", "A", "B", "T", "sigma", "z1", "z2", "w1", "w2", "v"])
def test_every_tampered_field_is_refused(setup, factors, field):
    p, q = factors
    proof = factor_proof.prove(p, q, setup)
    value = getattr(proof, field)
    tampered = dataclasses.replace(proof, **{field: value * 4 % setup.modulus if field in "PQABT" else value + 1})
    with pytest.raises(InvalidKey):
        factor_proof.verify(p * q, tampered, setup)


@pytest.mark.parametrize("field", ["sigma", "z1", "z2", "w1", "w2", "v"])
def test_a_long_response_is_refused_by_its_range_alone(setup, factors, field, monkeypatch):
    """Checked before any exponentiation: a million-bit exponent costs the verifier nothing."""
    p, q = factors
    proof = dataclasses.replace(factor_proof.prove(p, q, setup), **{field: -(2**1_000_000)})
    monkeypatch.setattr(gmpy2, "powmod", None)  # any exponentiation would fail with TypeError
    monkeypatch.setattr(setup.__class__, "commit", None)
    with pytest.raises(InvalidKey, match="out of range"):
        factor_proof.verify(p * q, proof, setup)
