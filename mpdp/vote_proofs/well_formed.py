"""What a key holder checks of every contribution before it decrypts a sum of proven votes or verifiable noise
(crypto.md, "Bound decryption"; docs/malicious-party.md, "Checked where it is decrypted").

The aggregator checks the proofs when the votes come in, but an aggregator colluding with one voter could skip that
voter's proofs, or take a flipped contribution the voter folded without the coin. So each contribution reaches the
key holders with what makes it well formed (`WellFormed`), and a holder recomputes the contribution from it:
- proven votes: every vote ciphertext's one-hot proof, folded into the voter's noise ciphertexts;
- verifiable noise: the voter's signature on its commitment digest (made before the coin existed), the vote proofs,
  the entries of the joint coin and every revealed share opening its entry, and the fold of the bits as the coin
  flips them (a flip is Enc(1)·c^(−1): public and deterministic) with the votes; with `holders_check_bits` also
  every bit's proof (pooled bits carry the proofs of their upload), which otherwise the aggregator alone checks:
  each holder would repeat the aggregator's whole check (docs/malicious-party.md gives the figures).
Cheap checks first (counts, signatures, digests, the coin's hashes), then the folds, then every proof of every
contributor in one random linear combination. A fold must equal the ciphertexts the voter signed, byte for byte;
otherwise the sum is not what the voters sent, and the holder decrypts nothing. The folds come before the proofs
because without verifiable noise the evidence travels unsigned: evidence that is not what was signed must cost
no exponentiation.

A row may carry several proven votes (`votes_per_row`, fixed by the session's parameters): each is proven one-hot
on its own and all fold into the row's plaintext.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mpdp.cryptocore.encodings.packing import SlotLayout
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.cryptocore.proofs import membership_proof as mp
from mpdp.cryptocore.proofs.membership_proof import MembershipProofInvalid
from mpdp.proto.v1 import common_pb2, threshold_sum_pb2
from mpdp.sessions.errors import invalid
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot, authenticate_commitment
from mpdp.threshold_sum.codec import ciphertexts_from_proto, ciphertexts_to_proto
from mpdp.vote_proofs import joint_coin, noise_bits, noise_pool
from mpdp.vote_proofs import votes as vote_proofs
from mpdp.vote_proofs.noise_pool import Spent

REQUEST_BUDGET_BYTES = 60 * 2**20  # one decryption request, below the transport's 64 MiB message limit (wire/channels.py)


def check_size(public_key: ThresholdPublicKey, voters: int, votes_per_voter: int, width: int, bits_per_voter: int,
               check_bits: bool) -> None:
    """At session start (invalid): every voter's proven votes and committed bits, with their proofs, reach each key
    holder in one request, which must fit one message. A bit costs a ciphertext, two commitments, two challenges
    and two responses (about 1.9 kB at 2048 bits, 3.7 kB at 4096); a vote of `width` branches likewise."""
    key = vote_proofs.proof_key(public_key)
    ciphertext = 2 * ((public_key.n.bit_length() + 7) // 8)
    branch = ciphertext + mp.CHALLENGE_BITS // 8 + (key.response_bits + 7) // 8 + 6  # field tags and lengths
    per_bit = ciphertext + (2 * branch if check_bits else 0)
    per_vote = ciphertext + (width + 1 if width == 1 else width) * branch
    needed = voters * (votes_per_voter * per_vote + bits_per_voter * per_bit)
    if needed > REQUEST_BUDGET_BYTES:
        raise invalid(f"the key holders' request would carry {needed / 2**20:.0f} MiB of proven votes and committed "
                      f"bits ({voters} voters, {bits_per_voter} bits each), over {REQUEST_BUDGET_BYTES // 2**20} MiB: "
                      "label fewer queries (points) per round")


class NotWellFormed(Exception):
    """A contribution is not what its proofs and commitments make it: the holder decrypts nothing."""


@dataclass(frozen=True)
class Ballots:
    """The session's ballot shape, as the holder's own parameters give it."""
    protocol: str
    session_id: str
    layout: SlotLayout
    rows: int
    width: int
    share_range: int
    verifiable_noise: bool
    check_bits: bool = False  # the committed bits' proofs too (`holders_check_bits`)
    votes_per_row: int = 1

    @property
    def bits(self) -> int:
        return self.rows * self.width * self.share_range


# ---------------------------------------------------------------------------------------------- the aggregator's side

def of_proven(noise: common_pb2.Ciphertexts, votes: common_pb2.ProvenVotes) -> threshold_sum_pb2.WellFormed:
    """Proven votes: the ballot as the voter sent it."""
    return threshold_sum_pb2.WellFormed(votes=votes, noise=noise)


def of_commitments(votes: common_pb2.ProvenVotes, bits: common_pb2.ProvenVotes,
                   signature: threshold_sum_pb2.ContributionSignature, check_bits: bool) -> threshold_sum_pb2.WellFormed:
    """Verifiable noise: the votes, the bits (with their proofs if the holders check them), and the voter's
    signature on its commitment."""
    if not check_bits:
        bits = common_pb2.ProvenVotes(ciphertexts=bits.ciphertexts)
    return threshold_sum_pb2.WellFormed(votes=votes, noise_bits=bits, commitment_signature=signature)


def of_pooled(public_key: ThresholdPublicKey, votes: common_pb2.ProvenVotes, spent: Spent,
              signature: threshold_sum_pb2.ContributionSignature, check_bits: bool) -> threshold_sum_pb2.WellFormed:
    """Verifiable noise with pooled bits: as `of_commitments`; if the holders check the bits, each with its proof as
    uploaded and each one's upload's first position (its proof's context)."""
    ciphertexts = ciphertexts_to_proto(public_key, spent.values)
    if not check_bits:
        return threshold_sum_pb2.WellFormed(votes=votes, noise_bits=common_pb2.ProvenVotes(ciphertexts=ciphertexts),
                                            commitment_signature=signature)
    bits = common_pb2.ProvenVotes(ciphertexts=ciphertexts, proofs=spent.proofs)
    return threshold_sum_pb2.WellFormed(votes=votes, noise_bits=bits, commitment_signature=signature,
                                        pool_first=spent.first, pool_uploads=spent.uploads)


# ---------------------------------------------------------------------------------------------- the key holder's side

@dataclass
class _Parsed:
    sender: int
    signed: list[bytes]  # the contribution's ciphertexts as signed
    votes: list[int]
    vote_proofs: list[mp.MembershipProof]
    noise: list[int]  # proven votes alone
    bits: list[int]  # verifiable noise
    bit_proofs: list[mp.MembershipProof]
    uploads: list[int]  # pooled bits: each one's upload's first position
    pool_first: int  # pooled bits: the first one's pool position


def check(public_key: ThresholdPublicKey, ballots: Ballots, slot: SumSlot, keys: ContributionKeys | None,
          request: threshold_sum_pb2.DecryptionRequest, voters: int) -> None:
    """Returns if every contribution of `request` is well formed; raises `invalid` for a malformed request (counts,
    lengths) and NotWellFormed, naming the sender, for a contribution its evidence does not make."""
    parsed = [_parse(public_key, ballots, c) for c in request.contributions]
    seed = _coin(public_key, ballots, slot, keys, request, parsed, voters) if ballots.verifiable_noise else b""
    for p in parsed:  # products only: evidence that is not what was signed costs no proof check
        if _recomputed(public_key, ballots, p, seed) != p.signed:
            raise NotWellFormed(f"party {p.sender}'s contribution is not the fold of its proven votes"
                                + (" and its noise bits as the joint coin flips them" if ballots.verifiable_noise else
                                   " and its noise ciphertexts"))
    groups = [group for p in parsed for group in _claims(public_key, ballots, p)]
    try:
        mp.verify_all(vote_proofs.proof_key(public_key), groups)
    except MembershipProofInvalid as error:
        _name_the_culprit(public_key, ballots, parsed)
        raise NotWellFormed(f"the contributions' proofs fail: {error}") from None


def _parse(public_key: ThresholdPublicKey, ballots: Ballots, contribution: threshold_sum_pb2.Contribution) -> _Parsed:
    """One contribution's evidence: its counts and lengths (invalid), then its numbers."""
    sender, evidence = contribution.sender, contribution.well_formed
    votes = ballots.rows * ballots.votes_per_row
    if not contribution.HasField("well_formed"):
        raise invalid(f"party {sender}'s contribution comes without its proofs: the key holders check them")
    if len(evidence.votes.proofs) != votes:
        raise invalid(f"party {sender}'s contribution has {len(evidence.votes.proofs)} vote proofs for {votes} votes")
    vote_values = ciphertexts_from_proto(public_key, evidence.votes.ciphertexts, votes)
    proofs = vote_proofs.proofs_from_proto(public_key, evidence.votes, ballots.width)
    noise: list[int] = []
    bits: list[int] = []
    bit_proofs: list[mp.MembershipProof] = []
    uploads: list[int] = []
    if ballots.verifiable_noise:
        if evidence.noise.values:
            raise invalid(f"party {sender}'s contribution carries noise ciphertexts beside its committed bits")
        proofs_expected = ballots.bits if ballots.check_bits else 0
        if len(evidence.noise_bits.proofs) != proofs_expected:
            raise invalid(f"party {sender}'s contribution has {len(evidence.noise_bits.proofs)} bit proofs for "
                          f"{ballots.bits} bits; the session's holders check {proofs_expected}")
        if len(evidence.pool_uploads) not in ((0, ballots.bits) if ballots.check_bits else (0,)):
            raise invalid(f"party {sender}'s pooled bits name {len(evidence.pool_uploads)} uploads for {ballots.bits}")
        bits = ciphertexts_from_proto(public_key, evidence.noise_bits.ciphertexts, ballots.bits)
        bit_proofs = vote_proofs.proofs_from_proto(public_key, evidence.noise_bits, 1)
        uploads = list(evidence.pool_uploads)
    else:
        if evidence.noise_bits.proofs or evidence.pool_uploads:
            raise invalid(f"party {sender}'s contribution carries noise bits in a session without verifiable noise")
        count = ballots.layout.plaintexts_needed(ballots.rows * ballots.width)
        noise = ciphertexts_from_proto(public_key, evidence.noise, count if ballots.share_range else 0)
    return _Parsed(sender, list(contribution.ciphertexts.values), vote_values, proofs, noise, bits, bit_proofs, uploads,
                   evidence.pool_first)


def _coin(public_key: ThresholdPublicKey, ballots: Ballots, slot: SumSlot, keys: ContributionKeys | None,
          request: threshold_sum_pb2.DecryptionRequest, parsed: Sequence[_Parsed], voters: int) -> bytes:
    """Each contributor's signed commitment is the entry the coin followed, and every share opens its entry."""
    entries = {e.holder: e for e in joint_coin.entries_from_proto(request.coin_entries, voters)}
    evidence = {c.sender: c.well_formed for c in request.contributions}
    for p in parsed:
        digest = noise_bits.commitment_digest(public_key, p.votes, p.bits)
        authenticate_commitment(keys, slot, p.sender, public_key.key_id, digest,
                                evidence[p.sender].commitment_signature)
        if p.sender not in entries or entries[p.sender].commitment_digest != digest:
            raise NotWellFormed(f"party {p.sender}'s commitments are not those the joint coin followed")
    shares = joint_coin.shares_from_proto(request.coin_shares, voters)
    try:
        return joint_coin.coin(ballots.session_id, list(entries.values()), shares)
    except joint_coin.RevealMismatch as error:
        raise NotWellFormed(str(error)) from None


def _claims(public_key: ThresholdPublicKey, ballots: Ballots, p: _Parsed) -> list[mp.Claims]:
    rows = vote_proofs.choices(ballots.layout, ballots.rows, ballots.width)
    choices = [rows[index // ballots.votes_per_row] for index in range(len(p.votes))]
    groups = [mp.Claims(p.votes, choices, p.vote_proofs,
                        vote_proofs.context(ballots.protocol, ballots.session_id, p.sender))]
    if not ballots.check_bits:
        return groups
    if not p.uploads:  # made in the round
        return groups + [mp.Claims(p.bits, [noise_bits.BIT] * len(p.bits), p.bit_proofs,
                                   noise_bits.context(ballots.protocol, ballots.session_id, p.sender))]
    start = 0
    for end in range(1, len(p.bits) + 1):  # one group per run of positions from one upload
        if end == len(p.bits) or p.uploads[end] != p.uploads[start]:
            upload, position = p.uploads[start], p.pool_first + start
            if not upload <= position < upload + noise_pool.MAX_FILL_BITS:
                raise invalid(f"party {p.sender}'s pool position {position} is not in the upload from {upload}")
            groups.append(mp.Claims(p.bits[start:end], [noise_bits.BIT] * (end - start), p.bit_proofs[start:end],
                                    noise_pool.context(public_key.key_id, p.sender, upload), position - upload))
            start = end
    return groups


def _name_the_culprit(public_key: ThresholdPublicKey, ballots: Ballots, parsed: Sequence[_Parsed]) -> None:
    """The combination failed: the first contributor whose own proofs fail, by name."""
    key = vote_proofs.proof_key(public_key)
    for p in parsed:
        try:
            mp.verify_all(key, _claims(public_key, ballots, p))
        except MembershipProofInvalid as error:
            raise NotWellFormed(f"party {p.sender}'s proofs fail: {error}") from None


def _recomputed(public_key: ThresholdPublicKey, ballots: Ballots, p: _Parsed, seed: bytes) -> list[bytes]:
    layout, width, nsquare = ballots.layout, ballots.width, public_key.paillier.nsquare
    if ballots.verifiable_noise:
        coins = noise_bits.coin_bits(seed, p.sender, len(p.bits))
        base = noise_bits.fold(public_key, layout, ballots.rows, width, ballots.share_range, [], p.bits, coins)
        result = ciphertexts_from_proto(public_key, base, len(base.values))
    else:
        n = public_key.n  # without shares, the public bias alone, as the voter folded it
        result = p.noise if ballots.share_range else [1 + m * n for m in layout.pack([0] * (ballots.rows * width))]
        result = list(result)
    for index, vote in enumerate(p.votes):
        plaintext = vote_proofs.plaintext_of_row(layout, index // ballots.votes_per_row, width)
        result[plaintext] = result[plaintext] * vote % nsquare
    return list(ciphertexts_to_proto(public_key, result).values)
