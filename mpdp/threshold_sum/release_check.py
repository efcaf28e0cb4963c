"""The releasing role's own check of a threshold sum it did not combine itself (docs/client-checks.md): from
the aggregator's `SumEvidence` it checks every contribution's signature, computes C = Π contributions, repeats
every holder's partial-decryption proof and combines t of them, with the same code the key holders and the
aggregator run (`decryption.check_request`, `SumCombiner`). What it returns is what the releasing role then
believes; anything the aggregator claimed beside it is compared by the caller (`compare`).

A mismatch is the aggregator's: it chose what to forward, and every piece it forwards is either signed by its
sender (contributions) or checkable by anyone (partial decryptions under the holders' verification keys)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from mpdp.cryptocore.errors import CryptoError
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.sessions.errors import ProtocolError, aborted
from mpdp.threshold_sum import decryption
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot
from mpdp.threshold_sum.combiner import SumCombiner


@dataclass(frozen=True)
class VerifiedSum:
    plaintexts: list[int]
    contributors: list[int]  # the senders of signed contributions, sorted
    decryptors: list[int]  # the t holders combined, sorted (the combiner's choice: the first t verified)
    rejected: dict[int, str]  # holders whose forwarded partial decryptions fail their proof, as checked here


def lie(who: str, what: str) -> ProtocolError:
    """The session fails on the releasing role's side: nothing is released, and the line names who lied."""
    return aborted(f"the {who} lied: {what}; nothing is released")


def verify_sum(public_key: ThresholdPublicKey, evidence: threshold_sum_pb2.SumEvidence, slot: SumSlot,
               keys: ContributionKeys | None, parties: int, min_contributors: int, ciphertext_count: int,
               proof_context: bytes, key_holders: Sequence[int], who: str = "aggregator",
               well_formed: Callable[[threshold_sum_pb2.DecryptionRequest], None] | None = None,
               named_failing: Collection[int] = ()) -> VerifiedSum:
    """The sum as the releasing role computes it from `evidence`; `lie(who, …)` if any piece fails.
    `named_failing`: the holders the aggregator says failed their proofs."""
    try:
        aggregate, contributors = decryption.check_request(public_key, evidence.request, slot, keys, parties,
                                                           min_contributors, ciphertext_count, well_formed)
    except (ProtocolError, CryptoError) as error:
        raise lie(who, f"the contributions it forwarded do not verify ({error})") from None
    combiner = SumCombiner(public_key, list(key_holders), aggregate, proof_context)
    try:
        # Every proof at once; the holders the aggregator names as failing each alone, so that a verdict on
        # them is exactly that of `threshold.verify_batch` (docs/client-checks.md, "Batch verification").
        combiner.accept_together([(answer.holder, answer.partials) for answer in evidence.answers], named_failing)
    except (ProtocolError, CryptoError) as error:
        raise lie(who, f"a key holder's forwarded answer is malformed ({error})") from None
    try:
        try:
            plaintexts, decryptors = combiner.combine()
        except CryptoError:  # a share the proofs checked together let through: each alone names its holder
            combiner.recheck()
            plaintexts, decryptors = combiner.combine()
    except (ProtocolError, CryptoError) as error:
        raise lie(who, f"the forwarded partial decryptions do not combine ({error})") from None
    return VerifiedSum(plaintexts, contributors, decryptors, dict(combiner.rejected))


def compare(who: str, name: str, claimed, verified) -> None:
    """`lie(who, …)` unless the claimed value is the one verified."""
    if claimed != verified:
        raise lie(who, f"it reported {name} {_short(claimed)}, the evidence gives {_short(verified)}")


def check_rejected_shares(who: str, claimed: Sequence[threshold_sum_pb2.RejectedShare], verified: VerifiedSum) -> None:
    """Every holder named as failing failed its proof here, and every one that failed here is named."""
    compare(who, "key holders whose partial decryptions failed", sorted(r.holder for r in claimed),
            sorted(verified.rejected))


def evidence_of(request: threshold_sum_pb2.DecryptionRequest, answers: dict[int, threshold_sum_pb2.PartialDecryptions]
                ) -> threshold_sum_pb2.SumEvidence:
    """What the aggregator forwards to the releasing role: the request without the per-contribution proofs
    (the holders checked them; the signatures cover the ciphertexts C is made of) and every answer it got."""
    request_copy = threshold_sum_pb2.DecryptionRequest(contributions=[
        threshold_sum_pb2.Contribution(sender=c.sender, ciphertexts=c.ciphertexts, signature=c.signature)
        for c in request.contributions])
    return threshold_sum_pb2.SumEvidence(request=request_copy, answers=[
        threshold_sum_pb2.HolderAnswer(holder=h, partials=answers[h]) for h in sorted(answers)])


def _short(value) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."
