"""Verifiable noise shares (dppp.md step 2 with verifiable noise; docs/malicious-party.md): a teacher commits to
N_i bits per (query, class) slot, each a Paillier ciphertext with a bit proof, before the joint coin exists; the
coin flips each bit homomorphically, and the teacher's share of a slot is the sum of its flipped bits, Bin(N_i, ½)
whatever bits it committed to.

Bit k of slot s is ciphertext number s·N_i + k and encrypts 0 or 2^(position·slot bits), its slot's place in the
packed plaintext, so a flip is Enc(2^p)·c^(−1) and a slot's bits add up in place. The aggregator folds, per
plaintext, the bias, the kept bits, the inverse of the product of the flipped ones (one inversion per plaintext)
and the rows' proven votes into the one vector the threshold sum adds; the teacher folds the same and signs it.

The joint coin (step 2b) is SHA-256 over every committed teacher's commitment digest and coin share (32 random
bytes sent with its commitments), so no teacher knows it while committing and each share enters it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import gmpy2
import numpy as np

from mpdp.cryptocore import ciphertext as ct
from mpdp.cryptocore import membership_proof as mp
from mpdp.cryptocore.packing import SlotLayout
from mpdp.cryptocore.threshold import ThresholdPublicKey
from mpdp.proto.v1 import common_pb2, dppp_pb2
from mpdp.sessions.errors import invalid
from mpdp.sessions.integers import int_to_bytes
from mpdp.threshold_sum.codec import ciphertexts_from_proto, ciphertexts_to_proto
from mpdp.vote_proofs import votes as vote_proofs

COIN_TAG = b"mpdp/dppp/joint-coin/v1"
DIGEST_TAG = b"mpdp/dppp/noise-commitments/v1"
COIN_SHARE_BYTES = 32


@dataclass(frozen=True)
class Committed:
    """One teacher's entry in the joint coin."""
    teacher: int
    commitment_digest: bytes
    coin_share: bytes


def context(session_id: str, sender: int) -> bytes:
    """Binds every bit proof to the session and its sender; the bit's index is hashed per proof."""
    return f"mpdp/protocols/dppp/{session_id}/noise bits of party {sender}".encode()


def bit_choices(layout: SlotLayout, slots: int, tosses: int) -> list[list[int]]:
    """Each bit's allowed plaintexts, 0 or its slot's packed unit, slot-major (N_i bits per slot)."""
    per_plaintext = layout.slots_per_plaintext
    return [[0, 1 << (slot % per_plaintext * layout.slot_bits)] for slot in range(slots) for _ in range(tosses)]


def commit(public_key: ThresholdPublicKey, layout: SlotLayout, bits: np.ndarray, context_bytes: bytes
           ) -> tuple[common_pb2.ProvenVotes, list[int]]:
    """By the teacher: `bits` is slots × N_i in {0, 1}; its ciphertexts with their proofs, and the ciphertexts."""
    slots, tosses = bits.shape
    if not np.all((bits == 0) | (bits == 1)):
        raise ValueError("noise bits must be 0 or 1")
    ciphertexts, proofs = mp.encrypt_and_prove(vote_proofs.proof_key(public_key), bit_choices(layout, slots, tosses),
                                               [int(b) for b in bits.ravel()], context_bytes)
    return _to_proto(public_key, ciphertexts, proofs), ciphertexts


def _to_proto(public_key: ThresholdPublicKey, ciphertexts: list[int], proofs: list[mp.MembershipProof]
              ) -> common_pb2.ProvenVotes:
    return common_pb2.ProvenVotes(
        ciphertexts=ciphertexts_to_proto(public_key, ciphertexts),
        proofs=[common_pb2.MembershipProof(commitments=[int_to_bytes(a) for a in p.commitments],
                                           challenges=[int_to_bytes(e) for e in p.challenges],
                                           responses=[int_to_bytes(z) for z in p.responses]) for p in proofs])


def check(public_key: ThresholdPublicKey, layout: SlotLayout, slots: int, tosses: int,
          message: common_pb2.ProvenVotes, context_bytes: bytes) -> list[int]:
    """By the aggregator: counts and lengths (invalid), then every bit proof in one combination
    (MembershipProofInvalid, naming nothing: the caller names the sender). Returns the bit ciphertexts."""
    count = slots * tosses
    if len(message.proofs) != count:
        raise invalid(f"{len(message.proofs)} noise bit proofs for {count} bits")
    values = ciphertexts_from_proto(public_key, message.ciphertexts, count)
    proofs = vote_proofs.proofs_from_proto(public_key, message, 1)  # width 1: two branches, 0 or the unit
    mp.verify(vote_proofs.proof_key(public_key), values, bit_choices(layout, slots, tosses), proofs, context_bytes)
    return values


def commitment_digest(votes: common_pb2.ProvenVotes, bits: common_pb2.ProvenVotes) -> bytes:
    """SHA-256 of a teacher's vote and bit ciphertexts, each length-prefixed: what the coin is drawn after."""
    hasher = hashlib.sha256(DIGEST_TAG)
    for value in (*votes.ciphertexts.values, *bits.ciphertexts.values):
        hasher.update(len(value).to_bytes(4, "big"))
        hasher.update(value)
    return hasher.digest()


def joint_coin(session_id: str, committed: Sequence[Committed]) -> bytes:
    """Step 2b: SHA-256 over the session and every committed teacher's (number, digest, coin share), in order."""
    if len({c.teacher for c in committed}) != len(committed):
        raise invalid("a teacher appears twice in the joint coin")
    hasher = hashlib.sha256(COIN_TAG)
    for field in (session_id.encode(), *(part for c in sorted(committed, key=lambda c: c.teacher)
                                         for part in (c.teacher.to_bytes(4, "big"), c.commitment_digest, c.coin_share))):
        hasher.update(len(field).to_bytes(4, "big"))
        hasher.update(field)
    return hasher.digest()


def committed_to_proto(committed: Sequence[Committed]) -> dppp_pb2.DpppCoin:
    return dppp_pb2.DpppCoin(committed=[dppp_pb2.DpppCommitted(teacher=c.teacher, commitment_digest=c.commitment_digest,
                                                               coin_share=c.coin_share) for c in committed])


def committed_from_proto(message: dppp_pb2.DpppCoin, teachers: int) -> list[Committed]:
    """At most one entry per teacher of the session, each digest and share 32 bytes (invalid otherwise)."""
    if len(message.committed) > teachers:
        raise invalid(f"{len(message.committed)} entries in the coin for {teachers} teachers")
    entries = []
    for entry in message.committed:
        if not 1 <= entry.teacher <= teachers:
            raise invalid(f"teacher {entry.teacher} is not among the session's {teachers}")
        if len(entry.commitment_digest) != 32 or len(entry.coin_share) != COIN_SHARE_BYTES:
            raise invalid("a commitment digest and a coin share are 32 bytes each")
        entries.append(Committed(entry.teacher, bytes(entry.commitment_digest), bytes(entry.coin_share)))
    return entries


def coin_bits(coin: bytes, teacher: int, count: int) -> np.ndarray:
    """The coin's `count` bits for one teacher's commitments (SHAKE-256 of the coin and the teacher's number)."""
    stream = hashlib.shake_256(coin + teacher.to_bytes(4, "big")).digest((count + 7) // 8)
    return np.unpackbits(np.frombuffer(stream, dtype=np.uint8))[:count].astype(np.int64)


def flipped_shares(bits: np.ndarray, coins: np.ndarray) -> np.ndarray:
    """By the teacher, for its own record: each slot's share after the flips."""
    return (bits ^ coins.reshape(bits.shape)).sum(axis=1)


def fold(public_key: ThresholdPublicKey, layout: SlotLayout, rows: int, width: int, tosses: int,
         vote_values: Sequence[int], bit_values: Sequence[int], coins: np.ndarray) -> common_pb2.Ciphertexts:
    """Per plaintext: Enc(bias) · Π kept bits · Enc(Σ flipped units) · (Π flipped bits)^(−1) · Π its rows' votes."""
    n, nsquare = public_key.n, public_key.paillier.nsquare
    per_plaintext, slot_bits = layout.slots_per_plaintext, layout.slot_bits
    slots = rows * width
    if len(bit_values) != slots * tosses or len(coins) != len(bit_values):
        raise ValueError("one coin bit per committed bit")
    kept = [gmpy2.mpz(1 + m * n) for m in layout.pack([0] * slots)]
    inverted = [gmpy2.mpz(1)] * len(kept)
    shifts = [0] * len(kept)
    for index, (value, coin) in enumerate(zip(bit_values, coins)):
        slot = index // tosses
        plaintext = slot // per_plaintext
        if coin:
            inverted[plaintext] = inverted[plaintext] * value % nsquare
            shifts[plaintext] += 1 << (slot % per_plaintext * slot_bits)
        else:
            kept[plaintext] = kept[plaintext] * value % nsquare
    result = [int(k * (1 + s % n * n) * gmpy2.invert(i, nsquare) % nsquare) for k, s, i in zip(kept, shifts, inverted)]
    for row, vote in enumerate(vote_values):
        index = vote_proofs.plaintext_of_row(layout, row, width)
        result[index] = result[index] * vote % nsquare
    return ciphertexts_to_proto(public_key, result)


def tampered_bit(public_key: ThresholdPublicKey, message: common_pb2.ProvenVotes) -> common_pb2.ProvenVotes:
    """Test mode only: bit 0's ciphertext moved off its proof (its plaintext plus 2), as a malicious teacher would."""
    values = list(message.ciphertexts.values)
    first = ct.from_bytes(public_key.paillier, values[0])
    values[0] = ct.to_bytes(public_key.paillier, first * (1 + 2 * public_key.n) % public_key.paillier.nsquare)
    result = common_pb2.ProvenVotes()
    result.CopyFrom(message)
    del result.ciphertexts.values[:]
    result.ciphertexts.values.extend(values)
    return result
