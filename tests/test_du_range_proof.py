"""Du's proven uploads (docs/malicious-party-du.md): the exact-range bit weights cover [0, L] and nothing else; range
and product proofs verify when honest and fail when a ciphertext is moved off them; a whole upload checks, decrypts
to the layout's packing of (n_i·θ·2^F, n_i), and is refused when n_i exceeds the cap, a coordinate leaves ±B, or
the signed ciphertexts are not the proven ones."""

import itertools

import numpy as np
import pytest

from mpdp.cryptocore.paillier.threshold import decrypt
from mpdp.cryptocore.proofs import membership_proof as mp
from mpdp.cryptocore.proofs import product_proof, range_proof
from mpdp.protocols.du import encoding, proven_upload
from mpdp.protocols.du.parameters import FRACTIONAL_BITS, DuParameters


def _key(public) -> mp.ProofKey:
    return mp.ProofKey(public.n, public.hs, public.key_id)


def _decrypt(public, shares, c):
    return decrypt(public, c, [s.partial_decrypt(c) for s in shares[:3]])[0]


@pytest.mark.parametrize("bound", [0, 1, 2, 5, 6, 7, 8, 100, 255, 256, 1000])
def test_the_weights_reach_every_value_of_the_range_and_no_other(bound):
    w = range_proof.weights(bound)
    assert sum(w) == bound
    sums = {sum(b * x for b, x in zip(bits, w)) for bits in itertools.product((0, 1), repeat=len(w))}
    assert sums == set(range(bound + 1))
    for value in range(bound + 1):
        assert sum(b * x for b, x in zip(range_proof.bits_of(value, bound), w)) == value
    with pytest.raises(ValueError):
        range_proof.bits_of(bound + 1, bound)


def test_range_proofs_verify_decrypt_and_refuse_a_value_moved_off_its_bits(threshold_key):
    public, shares = threshold_key
    key = _key(public)
    bounds, values = [1000, 0, 7], [999, 0, 5]
    proven = range_proof.prove(key, values, bounds, b"ctx")
    derived = range_proof.verify(key, proven.bit_ciphertexts, proven.proofs, bounds, b"ctx")
    assert derived == proven.values
    assert [_decrypt(public, shares, c) for c in derived] == values
    moved = list(proven.bit_ciphertexts)
    moved[len(range_proof.weights(1000)) - 1] = moved[len(range_proof.weights(1000)) - 1] * (1 + 5 * key.n) % key.nsquare
    with pytest.raises(mp.MembershipProofInvalid):
        range_proof.verify(key, moved, proven.proofs, bounds, b"ctx")
    with pytest.raises(mp.MembershipProofInvalid):
        range_proof.verify(key, proven.bit_ciphertexts, proven.proofs, [1000, 0, 7], b"other context")


def test_product_proofs_verify_and_refuse_another_product(threshold_key):
    public, shares = threshold_key
    key = _key(public)
    a_proven = range_proof.prove(key, [41], [100], b"ctx")
    x_proven = range_proof.prove(key, [12, 0], [20, 20], b"ctx")
    a = a_proven.values[0]
    limits = product_proof.Limits(5, key.randomness_bits + 5, key.randomness_bits)
    statements, witnesses = [], []
    for x, big_x, rho in zip([12, 0], x_proven.values, x_proven.randomness):
        c, sigma = product_proof.multiply(key, a, x)
        statements.append((a, big_x, c))
        witnesses.append((x, rho, sigma))
    proofs = product_proof.prove(key, limits, statements, witnesses, b"ctx")
    product_proof.verify(key, limits, statements, proofs, b"ctx")
    assert [_decrypt(public, shares, s[2]) for s in statements] == [41 * 12, 0]
    shifted = [(a, x, c * (1 + key.n) % key.nsquare) for a, x, c in statements]  # C off by one
    with pytest.raises(product_proof.ProductProofInvalid):
        product_proof.verify(key, limits, shifted, proofs, b"ctx")
    with pytest.raises(product_proof.ProductProofInvalid):
        product_proof.verify(key, limits, statements, proofs, b"another context")


def _parameters(public, cap=500, dimension=3, bound=2.0) -> DuParameters:
    return DuParameters(method="none", epsilon=1.0, delta=1e-5, rounds=2, tolerance=0.0, local_epochs=1,
                        learning_rate=0.1, regularization=0.01, parties=3, dimension=dimension, bound=bound,
                        secure_aggregation=True, honest_fraction=2 / 3, key_id=public.key_id, records_cap=cap)


def _theta(p):
    return np.array([p.bound, -p.bound, 0.25, -1.5])[:p.weights]


def test_an_honest_upload_checks_and_decrypts_to_the_packed_values(threshold_key):
    public, shares = threshold_key
    p = _parameters(public)
    theta = _theta(p)
    scaled = [int(v) for v in np.round(theta * 2**FRACTIONAL_BITS)]
    packed, proof = proven_upload.build(public, p, 500, scaled, b"ctx")
    message = encoding_message(public, packed)
    proven_upload.check(public, p, message, proof, b"ctx")
    layout = encoding.layout(p, public.n)
    assert [_decrypt(public, shares, c) for c in packed] == layout.pack(encoding.encode(p, 500, theta))
    with pytest.raises(mp.MembershipProofInvalid):
        proven_upload.check(public, p, message, proof, b"another party's context")


def encoding_message(public, packed):
    from mpdp.threshold_sum.codec import ciphertexts_to_proto
    return ciphertexts_to_proto(public, packed)


@pytest.mark.parametrize("records, theta_scale", [(10**7, 1.0), (500, 1000.0)])
def test_an_over_claim_or_a_coordinate_outside_b_cannot_be_proven(threshold_key, records, theta_scale):
    public, _ = threshold_key
    p = _parameters(public)
    scaled = [int(v) for v in np.round(_theta(p) * theta_scale * 2**FRACTIONAL_BITS)]
    with pytest.raises(ValueError):
        proven_upload.build(public, p, records, scaled, b"ctx")
    packed, proof = proven_upload.build(public, p, records, scaled, b"ctx", forge=True)
    with pytest.raises(mp.MembershipProofInvalid):
        proven_upload.check(public, p, encoding_message(public, packed), proof, b"ctx")


def test_a_signed_upload_that_is_not_the_proven_one_is_refused(threshold_key):
    public, _ = threshold_key
    p = _parameters(public)
    scaled = [int(v) for v in np.round(_theta(p) * 2**FRACTIONAL_BITS)]
    packed, proof = proven_upload.build(public, p, 500, scaled, b"ctx")
    other = [public.encryptor.encrypt(m) for m in encoding.layout(p, public.n).pack(encoding.encode(p, 10**7 // 2, _theta(p)))]
    with pytest.raises(proven_upload.UploadMismatch):
        proven_upload.check(public, p, encoding_message(public, other), proof, b"ctx")
