"""The joint coin of verifiable noise, commit then reveal (docs/malicious-party.md, "The joint coin").

Every contributor draws a secret 32-byte share and sends SHA-256(session, its number, share) with its bit
commitments. Only when every entry (its bit digest and coin commitment) is fixed does the aggregator send the
entries to each contributor, which keeps them and then reveals its share; the coin is SHA-256 over the session,
every entry and every revealed share. One honest contributor's share is uniform and hidden until every other
entry is fixed, so no coalition of the aggregator and the other contributors can choose the coin: it can only
refuse to reveal, which aborts the round (a dropped share would let it choose between two coins).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass

from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.sessions.errors import denied, invalid, precondition

SHARE_BYTES = 32
COMMITMENT_TAG = b"mpdp/joint-coin/share-commitment/v1"
COIN_TAG = b"mpdp/joint-coin/v2"


@dataclass(frozen=True)
class Entry:
    """One contributor's fixed part of the coin: what it committed to, and its coin share's commitment."""
    holder: int
    commitment_digest: bytes
    coin_commitment: bytes


class RevealMismatch(Exception):
    """A revealed share does not open its commitment: the round aborts, naming the holder."""


def draw_share() -> bytes:
    return secrets.token_bytes(SHARE_BYTES)


def _hash(tag: bytes, fields: Sequence[bytes]) -> bytes:
    hasher = hashlib.sha256(tag)
    for field in fields:
        hasher.update(len(field).to_bytes(4, "big"))
        hasher.update(field)
    return hasher.digest()


def commitment(session_id: str, holder: int, share: bytes) -> bytes:
    return _hash(COMMITMENT_TAG, (session_id.encode(), holder.to_bytes(4, "big"), share))


def opens(session_id: str, entry: Entry, share: bytes) -> bool:
    return len(share) == SHARE_BYTES and secrets.compare_digest(commitment(session_id, entry.holder, share),
                                                                entry.coin_commitment)


def check_reveal(session_id: str, entry: Entry, share: bytes) -> None:
    if not opens(session_id, entry, share):
        raise RevealMismatch(f"party {entry.holder}'s coin share does not open its commitment")


def admit_commitment(voter: int, voters: Container[int], excluded: Mapping[int, str], committed: Container[int],
                     noise_ciphertexts: int, coin_commitment: bytes) -> None:
    """The aggregator's step 2 guards for one voter's commitments, before any proof is checked: a voter of the
    session (denied otherwise), not excluded and not yet committed (a replay), with no noise ciphertexts beside its
    bits and a 32-byte coin commitment (invalid otherwise). Refused, nothing changes."""
    if voter not in voters:
        raise denied(f"party {voter} does not contribute to this sum")
    if voter in excluded:
        raise precondition(f"party {voter} was excluded: {excluded[voter]}")
    if voter in committed:
        raise precondition(f"party {voter} already committed (replay)")
    if noise_ciphertexts or len(coin_commitment) != 32:
        raise invalid("verifiable noise takes committed bits and a 32-byte coin commitment, no noise ciphertexts")


def take_reveal(session_id: str, entries: Mapping[int, Entry], revealed: dict[int, bytes], holder: int,
                share: bytes) -> bool:
    """The aggregator's step 2b for one revealed share: refused (and nothing kept) from a holder that committed
    to none or already revealed; kept if it opens the holder's commitment. False: it does not, and the caller
    aborts the round, since a holder choosing its share after seeing others' would choose the coin."""
    if holder not in entries:
        raise precondition(f"party {holder} committed to no coin share")
    if holder in revealed:
        raise precondition(f"party {holder} already revealed its coin share (replay)")
    if not opens(session_id, entries[holder], share):
        return False
    revealed[holder] = share
    return True


def coin(session_id: str, entries: Sequence[Entry], shares: Mapping[int, bytes]) -> bytes:
    """SHA-256 over the session, every entry in holder order and its share; every share must open its entry."""
    if len({e.holder for e in entries}) != len(entries):
        raise invalid("a contributor appears twice in the joint coin")
    if set(shares) != {e.holder for e in entries}:
        raise invalid("the coin shares are not those of the committed contributors")
    fields: list[bytes] = [session_id.encode()]
    for entry in sorted(entries, key=lambda e: e.holder):
        check_reveal(session_id, entry, shares[entry.holder])
        fields += [entry.holder.to_bytes(4, "big"), entry.commitment_digest, entry.coin_commitment, shares[entry.holder]]
    return _hash(COIN_TAG, fields)


def entries_to_proto(entries: Sequence[Entry]) -> threshold_sum_pb2.CoinCommitments:
    return threshold_sum_pb2.CoinCommitments(entries=[threshold_sum_pb2.CoinEntry(
        holder=e.holder, commitment_digest=e.commitment_digest, coin_commitment=e.coin_commitment) for e in entries])


def entries_from_proto(message: threshold_sum_pb2.CoinCommitments, contributors: int) -> list[Entry]:
    """At most one entry per contributor of the session, each digest and commitment 32 bytes (invalid otherwise)."""
    if len(message.entries) > contributors:
        raise invalid(f"{len(message.entries)} entries in the coin for {contributors} contributors")
    entries = []
    for entry in message.entries:
        if not 1 <= entry.holder <= contributors:
            raise invalid(f"party {entry.holder} is not among the session's {contributors} contributors")
        if len(entry.commitment_digest) != 32 or len(entry.coin_commitment) != 32:
            raise invalid("a commitment digest and a coin commitment are 32 bytes each")
        entries.append(Entry(entry.holder, bytes(entry.commitment_digest), bytes(entry.coin_commitment)))
    if len({e.holder for e in entries}) != len(entries):
        raise invalid("a contributor appears twice in the joint coin")
    return entries


def shares_to_proto(shares: Mapping[int, bytes]) -> threshold_sum_pb2.CoinShares:
    return threshold_sum_pb2.CoinShares(shares=[threshold_sum_pb2.CoinShare(holder=h, share=s)
                                                for h, s in sorted(shares.items())])


def shares_from_proto(message: threshold_sum_pb2.CoinShares, contributors: int) -> dict[int, bytes]:
    if len(message.shares) > contributors:
        raise invalid(f"{len(message.shares)} coin shares for {contributors} contributors")
    shares: dict[int, bytes] = {}
    for share in message.shares:
        if share.holder in shares or len(share.share) != SHARE_BYTES:
            raise invalid("one 32-byte coin share per contributor")
        shares[share.holder] = bytes(share.share)
    return shares
