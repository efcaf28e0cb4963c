"""Bit proofs: honest ones verify; a proof for a non-bit cannot be made (the owner's best effort fails), and a
proof does not move to another ciphertext, context or key."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.cryptocore.proofs.bit_proof import BitProof, BitProofInvalid, prove_bits, verify_bits


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=1), min_size=1, max_size=6))
def test_honest_proofs_verify(keypair, bits):
    encryptor = keypair.public.encryptor
    ciphertexts = [encryptor.encrypt(bit) for bit in bits]
    verify_bits(keypair.public, ciphertexts, prove_bits(keypair, ciphertexts, bits, b"ctx"), b"ctx")


@pytest.mark.parametrize("plaintext", [2, -1, (1 << 1000) + 1])
def test_a_non_bit_cannot_be_proven(keypair, plaintext):
    """The owner proves the non-bit as if it were 0 and as if it were 1: the real branch's relation fails."""
    ciphertext = keypair.public.encryptor.encrypt(plaintext)
    for claimed in (0, 1):
        forged = prove_bits(keypair, [ciphertext], [claimed], b"ctx")  # takes the n-th root of a non-residue
        with pytest.raises(BitProofInvalid):
            verify_bits(keypair.public, [ciphertext], forged, b"ctx")


def test_a_proof_is_bound_to_its_ciphertext_context_and_key(keypair, other_keypair):
    encryptor = keypair.public.encryptor
    zero, one = encryptor.encrypt(0), encryptor.encrypt(1)
    proofs = prove_bits(keypair, [zero, one], [0, 1], b"ctx")
    verify_bits(keypair.public, [zero, one], proofs, b"ctx")
    for args in (([one, zero], proofs, b"ctx"), ([zero, one], proofs, b"other"), ([zero, one], proofs[:1], b"ctx")):
        with pytest.raises(BitProofInvalid):
            verify_bits(keypair.public, *args)
    with pytest.raises(BitProofInvalid):
        verify_bits(other_keypair.public, [zero, one], proofs, b"ctx")


def test_malformed_proofs_are_refused_before_any_exponentiation(keypair):
    n = keypair.public.n
    zero = keypair.public.encryptor.encrypt(0)
    honest = prove_bits(keypair, [zero], [0], b"ctx")[0]
    for bad in (dataclasses.replace(honest, challenges=(2**128, 0)), dataclasses.replace(honest, responses=(0, 1)),
                dataclasses.replace(honest, responses=(n, 1)), BitProof((0,), (1,))):
        with pytest.raises(BitProofInvalid):
            verify_bits(keypair.public, [zero], [bad], b"ctx")


def test_prepared_commitments_are_used_once_and_still_verify(keypair):
    import time

    from mpdp.cryptocore.paillier import nth_powers
    from mpdp.cryptocore.proofs import bit_proof

    n = keypair.public.n
    nth_powers.rooted_pool_for(n).clear()
    bit_proof.prepare_while_idle(n, 8)
    deadline = time.monotonic() + 30
    while len(nth_powers.rooted_pool_for(n)) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    prepared = list(nth_powers.rooted_pool_for(n))
    assert len(prepared) == 8 and all(pow(s, n, n * n) == power for s, power in prepared)
    encryptor = keypair.public.encryptor
    ciphertexts = [encryptor.encrypt(bit) for bit in (1, 0, 1)]
    proofs = prove_bits(keypair, ciphertexts, [1, 0, 1], b"ctx")
    verify_bits(keypair.public, ciphertexts, proofs, b"ctx")
    assert list(nth_powers.rooted_pool_for(n)) == prepared[6:]  # six taken, never to be handed out again
    assert proofs[1].responses[1] == prepared[4][0]  # the second proof's simulated branch (its bit is 0)
