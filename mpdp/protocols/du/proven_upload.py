"""A Du upload under secure aggregation with its range proof (docs/malicious-party-du.md): the party proves
n_i ∈ [1, cap] and every θ_ij ∈ [−B, B] on the Paillier plaintexts; the server derives the packed ciphertexts the
sum takes from the proven ones, so the signed upload is exactly what was proven.

Per upload: N = Enc(n_i) from the bits of n_i − 1 ∈ [0, cap − 1]; X_j = Enc(x_j) from the bits of
x_j = θ_j·2^F + q ∈ [0, 2q] (q = ⌊B·2^F⌋); C_j = N^(x_j)·h_s^σ_j with a product proof; then
V_j = C_j·N^(−q) = Enc(n_i·θ_j·2^F), and the packed ciphertexts are Horner's Π V^(2^(slot·width)) times the public
bias (1+n)^bias — the layout's `pack` of (n_i·θ_j·2^F, n_i), computed on ciphertexts by sender and server alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import gmpy2

from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.cryptocore.proofs import membership_proof as mp
from mpdp.cryptocore.proofs import product_proof, range_proof
from mpdp.proto.v1 import common_pb2, du_pb2
from mpdp.protocols.du import encoding
from mpdp.protocols.du.parameters import FRACTIONAL_BITS, DuParameters
from mpdp.sessions.errors import invalid
from mpdp.sessions.integers import int_to_bytes
from mpdp.threshold_sum.codec import ciphertexts_from_proto, ciphertexts_to_proto


def proof_key(public_key: ThresholdPublicKey) -> mp.ProofKey:
    return mp.ProofKey(public_key.n, public_key.hs, public_key.key_id)


def context(session_id: str, sender: int, round_number: int) -> bytes:
    return f"mpdp/protocols/du/{session_id}/upload of party {sender}/round {round_number}".encode()


def offset(parameters: DuParameters) -> int:
    """q = ⌊B·2^F⌋: θ on the grid 2^−F with |θ| ≤ B has |θ·2^F| ≤ q."""
    return math.floor(parameters.bound * 2**FRACTIONAL_BITS)


def bounds(parameters: DuParameters) -> list[int]:
    """Upper ends of the proven values: n_i − 1, then every x_j."""
    return [parameters.records_cap - 1] + [2 * offset(parameters)] * parameters.weights


def limits(parameters: DuParameters, key: mp.ProofKey) -> product_proof.Limits:
    coordinate = 2 * offset(parameters)
    # X_j's randomness is Σ w·r ≤ coordinate·2^randomness_bits (the weights add up to the range's end)
    return product_proof.Limits(coordinate.bit_length(), key.randomness_bits + coordinate.bit_length(),
                                key.randomness_bits)


def _records_ciphertext(key: mp.ProofKey, proven_minus_one: int) -> int:
    return int(proven_minus_one * (1 + key.n) % key.nsquare)


def pack(public_key: ThresholdPublicKey, parameters: DuParameters, records: int, products: Sequence[int]) -> list[int]:
    """The packed ciphertexts of (n_i·θ_j·2^F …, n_i) from N and the C_j (module docstring)."""
    nsquare = public_key.paillier.nsquare
    layout = encoding.layout(parameters, public_key.n)
    unshift = gmpy2.invert(gmpy2.powmod(records, offset(parameters), nsquare), nsquare)
    values = [int(c * unshift % nsquare) for c in products] + [records]
    per, width = layout.slots_per_plaintext, layout.slot_bits
    packed = []
    for start in range(0, len(values), per):
        chunk = values[start:start + per]
        accumulator = gmpy2.mpz(1)
        for value in reversed(chunk):
            accumulator = gmpy2.powmod(accumulator, 1 << width, nsquare) * value % nsquare
        bias = layout.pack([0] * len(chunk))[0]
        packed.append(int(accumulator * (1 + bias * public_key.n) % nsquare))
    return packed


def build(public_key: ThresholdPublicKey, parameters: DuParameters, records: int, scaled: Sequence[int],
          context_bytes: bytes, forge: bool = False) -> tuple[list[int], du_pb2.DuRangeProof]:
    """By the party: the packed ciphertexts to sign and send, and the proof. `scaled` = round(θ_j·2^F).

    forge (test mode only): a party whose values are out of range proves the nearest legal ones and moves each
    value's weight-1 bit ciphertext off its proof by the excess, as a malicious party would; everything after
    the bits is then consistent with the out-of-range values."""
    key, ends = proof_key(public_key), bounds(parameters)
    q = offset(parameters)
    values = [records - 1] + [s + q for s in scaled]
    if len(values) != len(ends):
        raise ValueError(f"{len(scaled)} coordinates for {parameters.weights} weights")
    legal = [min(max(v, 0), end) for v, end in zip(values, ends)] if forge else values
    proven = range_proof.prove(key, legal, ends, context_bytes)
    bits = list(proven.bit_ciphertexts)
    if forge:
        last = 0
        for value, stand_in, end in zip(values, legal, ends):
            last += end.bit_length()
            if value != stand_in:
                bits[last - 1] = int(bits[last - 1] * (1 + (value - stand_in) * key.n) % key.nsquare)
    derived = range_proof.derive(key, bits, ends)
    records_ct = _records_ciphertext(key, derived[0])
    products, witnesses = [], []
    for x, x_ct, rho in zip(values[1:], derived[1:], proven.randomness[1:]):
        c, sigma = product_proof.multiply(key, records_ct, x)
        products.append(c)
        witnesses.append((x, rho, sigma))
    statements = [(records_ct, x_ct, c) for x_ct, c in zip(derived[1:], products)]
    if forge:  # its best effort: proofs for the legal stand-ins, which the moved bits already betray
        witnesses = [(stand_in, rho, sigma) for stand_in, (_, rho, sigma) in zip(legal[1:], witnesses)]
    product_proofs = product_proof.prove(key, limits(parameters, key), statements, witnesses, context_bytes)
    message = du_pb2.DuRangeProof(
        bits=ciphertexts_to_proto(public_key, bits),
        bit_proofs=[common_pb2.MembershipProof(commitments=[int_to_bytes(a) for a in p.commitments],
                                               challenges=[int_to_bytes(e) for e in p.challenges],
                                               responses=[int_to_bytes(z) for z in p.responses])
                    for p in proven.proofs],
        products=ciphertexts_to_proto(public_key, products),
        product_proofs=[du_pb2.ProductProof(challenge=int_to_bytes(p.challenge), z=int_to_bytes(p.z),
                                            z_rho=int_to_bytes(p.z_rho), z_sigma=int_to_bytes(p.z_sigma))
                        for p in product_proofs])
    return pack(public_key, parameters, records_ct, products), message


def _membership_proofs(public_key: ThresholdPublicKey, messages) -> list[mp.MembershipProof]:
    max_bytes = ct.ciphertext_length(public_key.paillier)
    proofs = []
    for proof in messages:
        fields = (proof.commitments, proof.challenges, proof.responses)
        if any(len(field) != 2 for field in fields):
            raise invalid("a bit proof must have 2 commitments, challenges and responses")
        if any(not 0 < len(value) <= max_bytes for field in fields for value in field):
            raise invalid("a bit proof's number has a wrong length")
        proofs.append(mp.MembershipProof(*(tuple(int.from_bytes(v, "big") for v in field) for field in fields)))
    return proofs


def _product_proofs(public_key: ThresholdPublicKey, messages) -> list[product_proof.ProductProof]:
    max_bytes = ct.ciphertext_length(public_key.paillier)
    proofs = []
    for proof in messages:
        fields = (proof.challenge, proof.z, proof.z_rho, proof.z_sigma)
        if any(not 0 < len(value) <= max_bytes for value in fields):
            raise invalid("a product proof's number has a wrong length")
        proofs.append(product_proof.ProductProof(*(int.from_bytes(v, "big") for v in fields)))
    return proofs


def check(public_key: ThresholdPublicKey, parameters: DuParameters, upload: common_pb2.Ciphertexts,
          message: du_pb2.DuRangeProof, context_bytes: bytes) -> None:
    """By the server, before the upload joins the sum: counts and lengths (invalid, naming the sender's message),
    then the bit proofs in one combination, the product proofs, and the packed ciphertexts against those derived
    from the proven ones (MembershipProofInvalid / ProductProofInvalid / UploadMismatch: the caller excludes)."""
    key, ends = proof_key(public_key), bounds(parameters)
    digits = range_proof.digit_count(ends)
    count = encoding.layout(parameters, public_key.n).plaintexts_needed(encoding.values(parameters))
    if len(message.bit_proofs) != digits or len(message.product_proofs) != parameters.weights:
        raise invalid(f"a Du range proof has {digits} bit proofs and {parameters.weights} product proofs")
    bits = ciphertexts_from_proto(public_key, message.bits, digits)
    products = ciphertexts_from_proto(public_key, message.products, parameters.weights)
    packed = ciphertexts_from_proto(public_key, upload, count)
    bit_proofs = _membership_proofs(public_key, message.bit_proofs)
    proofs = _product_proofs(public_key, message.product_proofs)
    derived = range_proof.verify(key, bits, bit_proofs, ends, context_bytes)
    records_ct = _records_ciphertext(key, derived[0])
    product_proof.verify(key, limits(parameters, key), [(records_ct, x, c) for x, c in zip(derived[1:], products)],
                         proofs, context_bytes)
    if pack(public_key, parameters, records_ct, products) != packed:
        raise UploadMismatch("the packed ciphertexts are not the ones the proven values give")


class UploadMismatch(product_proof.ProductProofInvalid):
    """The signed upload is not derived from the proven values."""
