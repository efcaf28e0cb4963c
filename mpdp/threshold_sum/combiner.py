"""The releasing role's part of a threshold sum: verify each holder's proven partial decryptions, then
combine any t of them. A bad proof rejects (and names) its holder; the rest may still combine.

Who is asked: every key holder at once, or (`ask_threshold_first`) exactly t, with a replacement for each
that fails or is unreachable and everyone left when the caller's deadline passes (crypto.md, "Asking t
holders"). Asking t first saves ℓ − t holders' partial decryptions and their proofs' checks."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from mpdp.cryptocore.errors import InvalidShare, NotEnoughShares
from mpdp.cryptocore.paillier.threshold import BatchPartialDecryption, ThresholdPublicKey, combine_vector, verify_batch
from mpdp.cryptocore.paillier.threshold_batch import verify_holders, verify_one_by_one
from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.sessions.errors import aborted, denied, precondition
from mpdp.threshold_sum.codec import batch_from_proto


class SumCombiner:
    def __init__(self, public_key: ThresholdPublicKey, key_holders: list[int], aggregate: list[int],
                 proof_context: bytes, ask_threshold_first: bool = False):
        self.public_key = public_key
        self.key_holders = list(key_holders)
        self.asked: list[int] = [] if ask_threshold_first else list(key_holders)
        self.aggregate = aggregate
        self.proof_context = proof_context
        self.partials: dict[int, BatchPartialDecryption] = {}
        self.absent: dict[int, str] = {}
        self.rejected: dict[int, str] = {}
        self.answers: dict[int, threshold_sum_pb2.PartialDecryptions] = {}  # as received, for the release's evidence

    def accept(self, holder: int, message: threshold_sum_pb2.PartialDecryptions) -> None:
        """Verify the holder's batch proof (expensive; after the cheap checks). Raises InvalidShare if it fails."""
        batch = self._admit(holder, message)
        try:
            verify_batch(self.public_key, self.aggregate, batch, self.proof_context)
        except InvalidShare as error:
            self.rejected[holder] = error.reason
            raise
        self.partials[holder] = batch

    def accept_together(self, answers: Sequence[tuple[int, threshold_sum_pb2.PartialDecryptions]],
                        one_by_one: Collection[int] = ()) -> None:
        """`accept` for every answer, their proofs checked at once (`threshold_batch.verify_holders`), those of
        the holders in `one_by_one` each alone. A failing proof is recorded in `rejected`, not raised; a
        malformed answer raises as in `accept`. Call `recheck` if `combine` then fails (docs/client-checks.md,
        "Batch verification")."""
        holders = [holder for holder, _ in answers]
        if len(set(holders)) != len(holders):
            raise precondition("a key holder answered twice (replay)")
        admitted = [self._admit(holder, message) for holder, message in answers]
        together = [batch for batch in admitted if batch.holder not in one_by_one]
        alone = [batch for batch in admitted if batch.holder in one_by_one]
        self.rejected.update(verify_holders(self.public_key, self.aggregate, together, self.proof_context))
        self.rejected.update(verify_one_by_one(self.public_key, self.aggregate, alone, self.proof_context))
        self.partials.update({batch.holder: batch for batch in admitted if batch.holder not in self.rejected})

    def recheck(self) -> None:
        """Every accepted proof checked alone: what names a holder when proofs checked together let through a
        share that does not combine."""
        failed = verify_one_by_one(self.public_key, self.aggregate, self.partials.values(), self.proof_context)
        for holder, reason in failed.items():
            del self.partials[holder]
            self.rejected[holder] = reason

    def _admit(self, holder: int, message: threshold_sum_pb2.PartialDecryptions) -> BatchPartialDecryption:
        """The cheap checks and the parse; raises unless the holder may answer now."""
        if holder not in self.key_holders:
            raise denied(f"party {holder} holds no key share")
        if holder not in self.asked:
            raise precondition(f"key holder {holder} was not asked to decrypt")
        if holder in self.partials or holder in self.rejected:
            raise precondition(f"key holder {holder} already answered (replay)")
        batch = batch_from_proto(self.public_key, holder, message, len(self.aggregate))
        self.answers[holder] = message
        return batch

    def mark_absent(self, holder: int, reason: str) -> None:
        if holder not in self.partials:
            self.absent[holder] = reason

    def holders_to_ask(self, preferred: Sequence[int] = ()) -> list[int]:
        """Not yet asked holders, enough that t asked ones have not failed (preferred ones first)."""
        failed = self.rejected.keys() | self.absent.keys()
        wanted = self.public_key.threshold - sum(1 for h in self.asked if h not in failed)
        fresh: list[int] = []
        for holder in [*preferred, *self.key_holders]:
            if len(fresh) >= wanted:
                break
            if holder in self.key_holders and holder not in self.asked and holder not in fresh:
                fresh.append(holder)
        self.asked += fresh
        return fresh

    def ask_everyone_left(self) -> list[int]:
        fresh = self.unasked
        self.asked += fresh
        return fresh

    @property
    def unasked(self) -> list[int]:
        return [h for h in self.key_holders if h not in self.asked]

    @property
    def settled(self) -> bool:
        """Every asked holder answered or is given up on (so every bad share among them is found), and either
        t shares verified or nobody is left to ask."""
        answered = self.partials.keys() | self.rejected.keys() | self.absent.keys()
        return all(h in answered for h in self.asked) and (
            len(self.partials) >= self.public_key.threshold or not self.unasked)

    def combine(self) -> tuple[list[int], list[int]]:
        """(plaintexts, decryptors): the sums, from the first t verified holders."""
        if len(self.partials) < self.public_key.threshold:
            raise aborted(str(NotEnoughShares(self.public_key.threshold, len(self.partials), self.rejected)))
        decryptors = sorted(self.partials)[: self.public_key.threshold]
        return combine_vector(self.public_key, {h: self.partials[h].values for h in decryptors}), decryptors

    def forget(self) -> None:
        self.partials.clear()
        self.answers.clear()
