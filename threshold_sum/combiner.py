"""The releasing role's part of a threshold sum: verify each holder's proven partial decryptions, then
combine any t of them. A bad proof rejects (and names) its holder; the rest may still combine."""

from __future__ import annotations

from cryptocore.errors import InvalidShare, NotEnoughShares
from cryptocore.threshold import BatchPartialDecryption, ThresholdPublicKey, combine, verify_batch
from mpdp_proto.v1 import threshold_sum_pb2
from sessions.errors import aborted, denied, precondition
from threshold_sum.codec import batch_from_proto


class SumCombiner:
    def __init__(self, public_key: ThresholdPublicKey, key_holders: list[int], aggregate: list[int],
                 proof_context: bytes):
        self.public_key = public_key
        self.key_holders = list(key_holders)
        self.aggregate = aggregate
        self.proof_context = proof_context
        self.partials: dict[int, BatchPartialDecryption] = {}
        self.absent: dict[int, str] = {}
        self.rejected: dict[int, str] = {}

    def accept(self, holder: int, message: threshold_sum_pb2.PartialDecryptions) -> None:
        """Verify the holder's batch proof (expensive; after the cheap checks). Raises InvalidShare if it fails."""
        if holder not in self.key_holders:
            raise denied(f"party {holder} holds no key share")
        if holder in self.partials or holder in self.rejected:
            raise precondition(f"key holder {holder} already answered (replay)")
        batch = batch_from_proto(self.public_key, holder, message, len(self.aggregate))
        try:
            verify_batch(self.public_key, self.aggregate, batch, self.proof_context)
        except InvalidShare as error:
            self.rejected[holder] = error.reason
            raise
        self.partials[holder] = batch

    def mark_absent(self, holder: int, reason: str) -> None:
        if holder not in self.partials:
            self.absent[holder] = reason

    @property
    def settled(self) -> bool:
        """Every holder answered or is given up on (so every bad share is found)."""
        return len(self.partials) + len(self.rejected) + len(self.absent) >= len(self.key_holders)

    def combine(self) -> tuple[list[int], list[int]]:
        """(plaintexts, decryptors): the sums, from the first t verified holders."""
        if len(self.partials) < self.public_key.threshold:
            raise aborted(str(NotEnoughShares(self.public_key.threshold, len(self.partials), self.rejected)))
        decryptors = sorted(self.partials)[: self.public_key.threshold]
        plaintexts = [combine(self.public_key, [self.partials[h].share(index) for h in decryptors])
                      for index in range(len(self.aggregate))]
        return plaintexts, decryptors

    def forget(self) -> None:
        self.partials.clear()
