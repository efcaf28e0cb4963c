"""The bit proofs' Fiat–Shamir challenge length is pinned: with a short challenge, a prover who knows no
witness forges a proof for a non-bit by grinding commitments until the hash hits the challenges it chose.

Each test forges exactly such a proof for a 16-bit challenge (about 2^16 hashes, one multiplication each)
and requires the verifier to refuse it; were the challenge cut to 16 bits, the forgery would verify."""

from __future__ import annotations

import secrets

import gmpy2
import pytest

from mpdp.cryptocore.comparison import elgamal_bit_proof
from mpdp.cryptocore.comparison.elgamal import Ciphertext, ElGamalKeyPair, g_power, h_power, random_exponent
from mpdp.cryptocore.comparison.group import G, P, Q
from mpdp.cryptocore.proofs import bit_proof
from mpdp.cryptocore.proofs.plaintext_opening import unblinded

SHORT = 16
MAX_TRIES = 1 << 21  # a miss after 2^21 tries at 2^−16 each: probability e^−32


def test_a_paillier_bit_proof_with_a_16_bit_challenge_is_refused(keypair):
    public, context = keypair.public, b"pin"
    n, nsquare = public.n, public.n * public.n
    ciphertext = public.encryptor.encrypt(2)  # not a bit: no witness for either branch
    challenges = (secrets.randbits(SHORT), secrets.randbits(SHORT))
    responses = [int(gmpy2.mpz(secrets.randbelow(n - 2) + 2)) for _ in range(2)]
    # Both branches simulated: a_β = z_β^n · (c·(1+n)^−β)^−e_β.
    commitments = [int(gmpy2.powmod(z, n, nsquare) * gmpy2.powmod(unblinded(n, ciphertext, beta), -e, nsquare) % nsquare)
                   for beta, (z, e) in enumerate(zip(responses, challenges))]
    step = int(gmpy2.powmod(2, n, nsquare))
    for _ in range(MAX_TRIES):
        digest = bit_proof._challenge(public, context, ciphertext, (commitments[0], commitments[1]))
        if digest % 2**SHORT == sum(challenges) % 2**SHORT:
            break
        responses[0] = responses[0] * 2 % n  # z_0 ← 2·z_0: a_0 ← a_0 · 2^n
        commitments[0] = commitments[0] * step % nsquare
    else:
        pytest.fail("no 16-bit forgery found")
    forged = bit_proof.BitProof(challenges, (responses[0], responses[1]))
    with pytest.raises(bit_proof.BitProofInvalid):
        bit_proof.verify_bits(public, [ciphertext], [forged], context)


def test_an_elgamal_bit_proof_with_a_16_bit_challenge_is_refused():
    public, context = ElGamalKeyPair.generate().public, b"pin"
    s = random_exponent()
    ciphertext = Ciphertext(g_power(s), h_power(public, s)).plus_constant(2)  # not a bit
    challenges = (secrets.randbits(SHORT), secrets.randbits(SHORT))
    responses = [random_exponent(), random_exponent()]
    a_inverse = pow(ciphertext.a, -1, P)
    commitments: list[int] = []
    for beta, (z, e) in enumerate(zip(responses, challenges)):
        shifted_inverse = pow(ciphertext.b * pow(G, -beta, P) % P, -1, P)  # (b / g^β)^−1
        commitments += [g_power(z) * pow(a_inverse, e, P) % P, h_power(public, z) * pow(shifted_inverse, e, P) % P]
    for _ in range(MAX_TRIES):
        digest = elgamal_bit_proof._challenge(public, context, ciphertext, commitments)
        if digest % 2**SHORT == sum(challenges) % 2**SHORT:
            break
        responses[0] = (responses[0] + 1) % Q  # z_0 ← z_0 + 1: A_0 ← A_0·g, B_0 ← B_0·h
        commitments[0], commitments[1] = commitments[0] * G % P, commitments[1] * public.h % P
    else:
        pytest.fail("no 16-bit forgery found")
    forged = elgamal_bit_proof.BitProof(challenges, (responses[0], responses[1]))
    with pytest.raises(elgamal_bit_proof.BitProofInvalid):
        elgamal_bit_proof.verify(public, ciphertext, forged, context)
