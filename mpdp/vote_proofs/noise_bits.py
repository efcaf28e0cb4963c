"""Verifiable noise shares (dppp.md step 2 with verifiable noise; docs/malicious-party.md): a teacher commits to
N_i bits per (query, class) slot, each a Paillier ciphertext of 0 or 1 with a bit proof, before the joint coin
(vote_proofs/joint_coin.py) exists; the coin flips each bit homomorphically, and the teacher's share of a slot is
the sum of its flipped bits, Bin(N_i, ½) whatever bits it committed to.

A bit encrypts 0 or 1, not a packed unit, so it does not depend on the query batch or its layout: a teacher can
make its bits before any query (the pool, vote_proofs/noise_pool.py). Bit k of slot s is the round's bit s·N_i + k;
a flip is Enc(1)·c^(−1). The fold multiplies each slot's kept bits and, apart, its flipped bits, and packs both
lists of slot products by Horner's rule (per plaintext, b squarings per slot of b bits: about one exponentiation
of |n| bits), so one inversion per plaintext turns the flipped product into its complement; then the bias and the
rows' proven votes. The teacher folds the same and signs it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import gmpy2
import numpy as np

from mpdp.cryptocore.encodings.packing import SlotLayout
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.cryptocore.proofs import membership_proof as mp
from mpdp.proto.v1 import common_pb2
from mpdp.sessions.errors import invalid
from mpdp.sessions.integers import int_to_bytes
from mpdp.threshold_sum.codec import ciphertexts_from_proto, ciphertexts_to_proto
from mpdp.vote_proofs import votes as vote_proofs

DIGEST_TAG = b"mpdp/noise-commitments/v2"
MAX_ROUND_BITS = 16_000  # bits made in a round, one message: about 3.7 kB each with its proof at 4096 bits, < 64 MB
BIT = (0, 1)


def context(protocol: str, session_id: str, sender: int) -> bytes:
    """Bits made in the round: bound to protocol, session and sender; the bit's index is hashed per proof."""
    return f"mpdp/protocols/{protocol}/{session_id}/noise bits of party {sender}".encode()


def commit(public_key: ThresholdPublicKey, bits: np.ndarray, context_bytes: bytes
           ) -> tuple[common_pb2.ProvenVotes, list[int]]:
    """By the teacher: `bits` in {0, 1} (any shape, read flat); their ciphertexts with proofs, and the ciphertexts."""
    flat = bits.ravel()
    if not np.all((flat == 0) | (flat == 1)):
        raise ValueError("noise bits must be 0 or 1")
    ciphertexts, proofs = mp.encrypt_and_prove(vote_proofs.proof_key(public_key), [BIT] * len(flat),
                                               [int(b) for b in flat], context_bytes)
    return _to_proto(public_key, ciphertexts, proofs), ciphertexts


def _to_proto(public_key: ThresholdPublicKey, ciphertexts: list[int], proofs: list[mp.MembershipProof]
              ) -> common_pb2.ProvenVotes:
    return common_pb2.ProvenVotes(
        ciphertexts=ciphertexts_to_proto(public_key, ciphertexts),
        proofs=[common_pb2.MembershipProof(commitments=[int_to_bytes(a) for a in p.commitments],
                                           challenges=[int_to_bytes(e) for e in p.challenges],
                                           responses=[int_to_bytes(z) for z in p.responses]) for p in proofs])


def check(public_key: ThresholdPublicKey, count: int, message: common_pb2.ProvenVotes, context_bytes: bytes
          ) -> list[int]:
    """By the aggregator: counts and lengths (invalid), then every bit proof in one combination
    (MembershipProofInvalid, naming nothing: the caller names the sender). Returns the bit ciphertexts."""
    if len(message.proofs) != count:
        raise invalid(f"{len(message.proofs)} noise bit proofs for {count} bits")
    values = ciphertexts_from_proto(public_key, message.ciphertexts, count)
    proofs = vote_proofs.proofs_from_proto(public_key, message, 1)  # width 1: two branches, 0 or the unit
    mp.verify(vote_proofs.proof_key(public_key), values, [BIT] * count, proofs, context_bytes)
    return values


def commitment_digest(public_key: ThresholdPublicKey, vote_values: Sequence[int], bit_values: Sequence[int]) -> bytes:
    """SHA-256 of a teacher's vote and bit ciphertexts, in order, each at its fixed length: what the coin follows."""
    hasher = hashlib.sha256(DIGEST_TAG)
    hasher.update(len(vote_values).to_bytes(4, "big") + len(bit_values).to_bytes(4, "big"))
    for value in (*vote_values, *bit_values):
        hasher.update(ct.to_bytes(public_key.paillier, value))
    return hasher.digest()


def coin_bits(coin: bytes, teacher: int, count: int) -> np.ndarray:
    """The coin's `count` bits for one teacher's commitments (SHAKE-256 of the coin and the teacher's number)."""
    stream = hashlib.shake_256(coin + teacher.to_bytes(4, "big")).digest((count + 7) // 8)
    return np.unpackbits(np.frombuffer(stream, dtype=np.uint8))[:count].astype(np.int64)


def flipped_shares(bits: np.ndarray, coins: np.ndarray) -> np.ndarray:
    """By the teacher, for its own record: each slot's share after the flips."""
    return (bits ^ coins.reshape(bits.shape)).sum(axis=1)


def _horner(values: Sequence[int], slot_bits: int, nsquare) -> gmpy2.mpz:
    """Π_p values[p]^(2^(p·slot_bits)) mod n²: slot products to their packed places, by squarings alone."""
    shift = gmpy2.mpz(1) << slot_bits
    result = gmpy2.mpz(1)
    for value in reversed(values):
        result = gmpy2.powmod(result, shift, nsquare) * value % nsquare
    return result


def fold(public_key: ThresholdPublicKey, layout: SlotLayout, rows: int, width: int, tosses: int,
         vote_values: Sequence[int], bit_values: Sequence[int], coins: np.ndarray, copies: int = 1
         ) -> common_pb2.Ciphertexts:
    """Per plaintext: Enc(bias) · K · F^(−1) · Enc(Σ flipped bits at their places) · Π its rows' votes (`copies`
    proven votes per row, row-major), where K and F are the slots' kept and flipped bit products packed by
    Horner's rule."""
    n, nsquare = public_key.n, public_key.paillier.nsquare
    per_plaintext, slot_bits = layout.slots_per_plaintext, layout.slot_bits
    slots = rows * width
    if len(bit_values) != slots * tosses or len(coins) != len(bit_values):
        raise ValueError("one coin bit per committed bit")
    kept = [gmpy2.mpz(1)] * slots
    flipped = [gmpy2.mpz(1)] * slots
    ones = [0] * slots
    for index, (value, coin) in enumerate(zip(bit_values, coins)):
        slot = index // tosses
        if coin:
            flipped[slot] = flipped[slot] * value % nsquare
            ones[slot] += 1
        else:
            kept[slot] = kept[slot] * value % nsquare
    result = []
    for plaintext, bias in enumerate(layout.pack([0] * slots)):
        first, last = plaintext * per_plaintext, min((plaintext + 1) * per_plaintext, slots)
        shift = sum(ones[s] << ((s - first) * slot_bits) for s in range(first, last))
        packed_kept = _horner(kept[first:last], slot_bits, nsquare)
        packed_flipped = _horner(flipped[first:last], slot_bits, nsquare)
        plain = (1 + (bias + shift) % n * n) % nsquare
        result.append(int(plain * packed_kept * gmpy2.invert(packed_flipped, nsquare) % nsquare))
    for index_of_vote, vote in enumerate(vote_values):
        index = vote_proofs.plaintext_of_row(layout, index_of_vote // copies, width)
        result[index] = result[index] * vote % nsquare
    return ciphertexts_to_proto(public_key, result)
