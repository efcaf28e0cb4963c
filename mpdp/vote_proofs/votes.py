"""A voter's one-hot votes as proven ciphertexts apart from its packed noise shares, and the aggregator's check
and fold of both into the one packed vector the threshold sum adds (dppp.md step 2, hamm.md step 2;
docs/malicious-party.md, "Proven votes").

Row q (a query or public point) owns `width` consecutive slots: C classes (one-hot), or one slot for a binary
vote (0 or 1). Its vote is one ciphertext V_q of 2^(position·slot bits) for the chosen slot, or of 0 for a
binary 0; the layout keeps a row's slots in one plaintext, so the aggregator folds V_q into that plaintext's
noise ciphertext with one multiplication. A DPPP ensemble ballot (T models per teacher) carries `copies` = T
proven one-hot votes per row, row-major, all folded into the row's plaintext: the row's counts are in [0, T] and
add up to T, each model's vote proven on its own. The noise ciphertexts carry the bias and the shares alone; they are not
proven (docs/malicious-party.md says what that leaves a voter). Without noise shares (share range 0) a voter
sends none: the aggregator encrypts the public bias itself, so every slot of the voter's is proven.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mpdp.cryptocore.encodings.packing import SlotLayout
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.cryptocore.proofs import membership_proof as mp
from mpdp.cryptocore.proofs.precomputed_powers import PowerPool
from mpdp.proto.v1 import common_pb2
from mpdp.sessions.errors import invalid
from mpdp.sessions.integers import int_to_bytes
from mpdp.threshold_sum.codec import ciphertexts_from_proto, ciphertexts_to_proto


def aligned(layout: SlotLayout, width: int) -> SlotLayout:
    """The layout with whole rows per plaintext: a row's slots never straddle two plaintexts."""
    rows = layout.slots_per_plaintext // width
    if rows < 1:
        raise invalid(f"a row of {width} slots of {layout.slot_bits} bits does not fit one plaintext: proven votes "
                      "need fewer classes or a larger key")
    return dataclasses.replace(layout, plaintext_bits=rows * width * layout.slot_bits)


def choices(layout: SlotLayout, rows: int, width: int, copies: int = 1) -> list[list[int]]:
    """Each proven vote's allowed plaintexts (`copies` per row): one 1 in one of its row's slots (width > 1), or
    0 or 1 (width 1)."""
    per_plaintext = layout.slots_per_plaintext
    lists = []
    for row in range(rows):
        first = row * width % per_plaintext
        ones = [1 << ((first + c) * layout.slot_bits) for c in range(width)]
        lists += [[0, *ones] if width == 1 else ones] * copies
    return lists


def plaintext_of_row(layout: SlotLayout, row: int, width: int) -> int:
    return row * width // layout.slots_per_plaintext


def proof_key(public_key: ThresholdPublicKey) -> mp.ProofKey:
    return mp.ProofKey(public_key.n, public_key.hs, public_key.key_id)


def context(protocol: str, session_id: str, sender: int) -> bytes:
    """Binds every proof to protocol, session and sender; the row index is hashed per proof."""
    return f"{protocol}/{session_id}/votes of party {sender}".encode()


def cast(public_key: ThresholdPublicKey, layout: SlotLayout, slots: np.ndarray, context_bytes: bytes,
         powers: PowerPool | None = None, copies: int = 1) -> common_pb2.ProvenVotes:
    """By the voter: `slots` is (rows·copies) × width in {0, 1} (one-hot, or one bit per vote), row-major; its
    exponentiations from `powers` when made offline."""
    votes, width = slots.shape
    if votes % copies:
        raise ValueError(f"{votes} votes are not {copies} per row")
    lists = choices(layout, votes // copies, width, copies)
    if width > 1 and not (np.all(slots.sum(axis=1) == 1) and np.all((slots == 0) | (slots == 1))):
        raise ValueError("every row must be one-hot")
    picks = [int(row[0]) if width == 1 else int(np.argmax(row)) for row in slots]
    ciphertexts, proofs = mp.encrypt_and_prove(proof_key(public_key), lists, picks, context_bytes, powers=powers)
    return common_pb2.ProvenVotes(
        ciphertexts=ciphertexts_to_proto(public_key, ciphertexts),
        proofs=[common_pb2.MembershipProof(commitments=[int_to_bytes(a) for a in p.commitments],
                                           challenges=[int_to_bytes(e) for e in p.challenges],
                                           responses=[int_to_bytes(z) for z in p.responses]) for p in proofs])


def proofs_from_proto(public_key: ThresholdPublicKey, message: common_pb2.ProvenVotes, width: int
                       ) -> list[mp.MembershipProof]:
    """Counts and lengths before any parsing into integers."""
    branches = width + 1 if width == 1 else width
    max_bytes = ct.ciphertext_length(public_key.paillier)
    proofs = []
    for proof in message.proofs:
        fields = (proof.commitments, proof.challenges, proof.responses)
        if any(len(field) != branches for field in fields):
            raise invalid(f"a vote proof must have {branches} commitments, challenges and responses")
        if any(not 0 < len(value) <= max_bytes for field in fields for value in field):
            raise invalid("a vote proof's number has a wrong length")
        proofs.append(mp.MembershipProof(*(tuple(int.from_bytes(v, "big") for v in field) for field in fields)))
    return proofs


def noise_ciphertexts(public_key: ThresholdPublicKey, layout: SlotLayout, noise: np.ndarray, share_range: int
                      ) -> common_pb2.Ciphertexts:
    """By the voter: its packed shares (and the bias), or nothing when there are no shares."""
    if share_range == 0:
        return common_pb2.Ciphertexts(key_id=public_key.key_id)
    return ciphertexts_to_proto(public_key, [public_key.encryptor.encrypt(p) for p in layout.pack(noise.ravel().tolist())])


def check_and_fold(public_key: ThresholdPublicKey, layout: SlotLayout, rows: int, width: int, share_range: int,
                   noise: common_pb2.Ciphertexts, votes: common_pb2.ProvenVotes, context_bytes: bytes,
                   copies: int = 1) -> common_pb2.Ciphertexts:
    """By the aggregator: the shapes (invalid), then the proofs (MembershipProofInvalid, naming nothing: the
    caller names the sender), then the folded vector (`folded`), which the voter signed."""
    noise_values, vote_values = _parsed(public_key, layout, rows, width, share_range, noise, votes, copies)
    proofs = proofs_from_proto(public_key, votes, width)
    mp.verify(proof_key(public_key), vote_values, choices(layout, rows, width, copies), proofs, context_bytes)
    return _fold(public_key, layout, width, noise_values, vote_values, copies)


def checked(public_key: ThresholdPublicKey, layout: SlotLayout, rows: int, width: int, votes: common_pb2.ProvenVotes,
            context_bytes: bytes, copies: int = 1) -> list[int]:
    """By the aggregator, votes alone (verifiable noise): shapes (invalid), then the proofs (MembershipProofInvalid)."""
    if len(votes.proofs) != rows * copies:
        raise invalid(f"{len(votes.proofs)} vote proofs for {rows} rows of {copies}")
    vote_values = ciphertexts_from_proto(public_key, votes.ciphertexts, rows * copies)
    mp.verify(proof_key(public_key), vote_values, choices(layout, rows, width, copies),
              proofs_from_proto(public_key, votes, width), context_bytes)
    return vote_values


def folded(public_key: ThresholdPublicKey, layout: SlotLayout, rows: int, width: int, share_range: int,
           noise: common_pb2.Ciphertexts, votes: common_pb2.ProvenVotes, copies: int = 1) -> common_pb2.Ciphertexts:
    """By the voter, to sign its contribution to the sum: each plaintext's noise ciphertext times its rows'
    votes, exactly as the aggregator folds them."""
    return _fold(public_key, layout, width, *_parsed(public_key, layout, rows, width, share_range, noise, votes, copies),
                 copies)


def _parsed(public_key: ThresholdPublicKey, layout: SlotLayout, rows: int, width: int, share_range: int,
            noise: common_pb2.Ciphertexts, votes: common_pb2.ProvenVotes, copies: int = 1
            ) -> tuple[list[int], list[int]]:
    count = layout.plaintexts_needed(rows * width)
    if share_range == 0:  # the bias alone, public: (1 + n)^bias, re-randomised when the sum is closed
        n = public_key.n
        noise_values = [1 + m * n for m in layout.pack([0] * (rows * width))]
        ciphertexts_from_proto(public_key, noise, 0)
    else:
        noise_values = ciphertexts_from_proto(public_key, noise, count)
    if len(votes.proofs) != rows * copies:
        raise invalid(f"{len(votes.proofs)} vote proofs for {rows} rows of {copies}")
    return noise_values, ciphertexts_from_proto(public_key, votes.ciphertexts, rows * copies)


def _fold(public_key: ThresholdPublicKey, layout: SlotLayout, width: int, noise_values: list[int],
          vote_values: list[int], copies: int = 1) -> common_pb2.Ciphertexts:
    nsquare = public_key.paillier.nsquare
    result = list(noise_values)
    for index_of_vote, vote in enumerate(vote_values):
        index = plaintext_of_row(layout, index_of_vote // copies, width)
        result[index] = result[index] * vote % nsquare
    return ciphertexts_to_proto(public_key, result)
