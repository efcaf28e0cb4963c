"""Step 6 of a DPPP round (dppp.md), the same code at the aggregator that computes it and at the client that
checks it: the combined plaintexts unpacked into noisy histograms, and the client's check of a
`DpppRoundResult` against the evidence it carries (docs/client-checks.md). Free of gRPC."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mpdp.cryptocore.errors import CryptoError
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.cryptocore.proofs.membership_proof import MembershipProofInvalid
from mpdp.proto.v1 import dppp_pb2
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.protocols.dppp.reference import labels as argmax_labels
from mpdp.sessions.errors import ProtocolError, aborted
from mpdp.threshold_sum import binding
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot, authenticate, authenticate_commitment
from mpdp.threshold_sum.codec import ciphertexts_from_proto
from mpdp.threshold_sum.context import proof_context
from mpdp.threshold_sum.release_check import check_rejected_shares, compare, lie, verify_sum
from mpdp.vote_proofs import noise_bits
from mpdp.vote_proofs import votes as vote_proofs

AGGREGATOR = "aggregator"


def histograms(parameters: DpppParameters, public_key: ThresholdPublicKey, plaintexts: list[int],
               contributors: int) -> np.ndarray:
    """Unpack, check feasibility, remove the noise mean (aborted if the counts are infeasible)."""
    layout = parameters.layout(public_key.n)
    try:
        sums = layout.unpack(plaintexts, parameters.values, biased_summands=contributors)
    except CryptoError as error:  # a plaintext outside the layout: malformed votes
        raise aborted(f"the aggregate does not decrypt to valid counts: {error}") from None
    counts = np.array(sums, dtype=object).reshape(parameters.queries, parameters.classes)
    check_feasible(parameters, counts, contributors)
    mean = contributors * (parameters.share_range // 2)  # shares are centred on range/2
    return counts.astype(np.int64) - mean


def check_feasible(parameters: DpppParameters, counts: np.ndarray, contributors: int) -> None:
    """Honest teachers give each count in [0, K′T + Σ N_i] and each query's total in [K′T, K′T + C·Σ N_i]
    (T one-hot votes and C Binomial shares each). Anything else means stuffed votes: abort, release nothing."""
    votes = contributors * parameters.ensemble
    noise = contributors * parameters.share_range
    totals = counts.sum(axis=1)
    if counts.min() < 0 or counts.max() > votes + noise:
        raise aborted(f"decrypted counts outside the feasible range [0, {votes + noise}] "
                      f"(K′T = {votes}, Σ N_i = {noise}): a teacher's votes are malformed")
    if totals.min() < votes or totals.max() > votes + parameters.classes * noise:
        raise aborted(f"a query's decrypted votes do not add up to T = {parameters.ensemble} votes per "
                      "contributor: a teacher's votes are malformed")


@dataclass(frozen=True)
class CheckedRound:
    """What the client believes after its checks: every field computed by it, none taken from the aggregator."""
    histograms: np.ndarray
    labels: np.ndarray
    contributors: list[int]
    decryptors: list[int]
    rejected_shares: dict[int, str]  # holders whose forwarded partial decryptions failed their proof here
    rejected_votes: dict[int, str]  # teachers whose forwarded votes failed a check repeated here
    unverified_blame: dict[int, str]  # exclusions the client cannot repeat: the aggregator's word, no one blamed


def check_round(parameters: DpppParameters, public_key: ThresholdPublicKey, session_id: str,
                keys: ContributionKeys | None, key_holders: list[int], result: dppp_pb2.DpppRoundResult
                ) -> CheckedRound:
    """The client's check of the aggregator's result (docs/client-checks.md). `lie("aggregator", …)` on any
    mismatch: the caller releases nothing."""
    p = parameters
    layout = p.layout(public_key.n)
    if not result.HasField("evidence"):
        raise lie(AGGREGATOR, "its result carries no evidence to check")
    compare(AGGREGATOR, "the shape (queries, classes)", (result.queries, result.classes), (p.queries, p.classes))
    slot = SumSlot.of("dppp", session_id, p)
    verified = verify_sum(public_key, result.evidence, slot, keys, p.teachers, p.calibration.min_contributors,
                          layout.plaintexts_needed(p.values), proof_context("dppp", session_id), key_holders,
                          named_failing={r.holder for r in result.rejected})
    try:
        noisy = histograms(p, public_key, verified.plaintexts, len(verified.contributors))
    except ProtocolError as error:  # the aggregator would have aborted on these counts, not released them
        raise lie(AGGREGATOR, f"it released counts it had to refuse ({error})") from None
    labels = argmax_labels(noisy)
    compare(AGGREGATOR, "contributors", list(result.contributors), verified.contributors)
    compare(AGGREGATOR, "decryptors", list(result.decryptors), verified.decryptors)
    check_rejected_shares(AGGREGATOR, result.rejected, verified)
    compare(AGGREGATOR, "histograms", list(result.histograms), noisy.ravel().tolist())
    compare(AGGREGATOR, "labels", list(result.labels), labels.tolist())
    compare(AGGREGATOR, "the total tosses N", result.total_tosses_required, p.total_tosses)
    compare(AGGREGATOR, "the tosses per teacher", result.tosses_per_teacher,
            p.share_range if p.noise == "binomial" else 0)
    rejected_votes, unverified = _check_blame(p, public_key, session_id, keys, slot, result, verified.contributors)
    return CheckedRound(noisy, labels, verified.contributors, verified.decryptors, verified.rejected, rejected_votes,
                        unverified)


def _check_blame(p: DpppParameters, public_key: ThresholdPublicKey, session_id: str, keys: ContributionKeys | None,
                 slot: SumSlot, result: dppp_pb2.DpppRoundResult, contributors: list[int]
                 ) -> tuple[dict[int, str], dict[int, str]]:
    """Every teacher named as failing: the check the aggregator names, repeated on the votes and proofs it
    forwards, which their sender signed. A blame that does not hold is a lie. One the client cannot repeat
    (pooled noise bits, which only the aggregator's pool holds, or a signature that fails: the aggregator could
    have altered what it covers) is reported as the aggregator's word and blames no one."""
    claimed = {r.holder: r.reason for r in result.rejected_votes}
    if len(claimed) != len(result.rejected_votes):
        raise lie(AGGREGATOR, "it named a teacher as failing twice")
    for teacher in claimed:
        if teacher in contributors:
            raise lie(AGGREGATOR, f"it named teacher {teacher} as failing and counted its contribution")
        if not 1 <= teacher <= p.teachers:
            raise lie(AGGREGATOR, f"it named party {teacher}, not a teacher of this round, as failing")
    if claimed and not p.proven_votes:
        raise lie(AGGREGATOR, f"it named teachers {sorted(claimed)} as failing a vote check, and unproven votes "
                              "have none")
    forwarded = {b.teacher: b.votes for b in result.blamed}
    verified: dict[int, str] = {}
    unverified: dict[int, str] = {}
    for teacher, reason in sorted(claimed.items()):
        if teacher not in forwarded:
            raise lie(AGGREGATOR, f"it named teacher {teacher} as failing ({reason}) without its votes")
        votes = forwarded[teacher]
        if p.verifiable_noise and votes.pooled:
            unverified[teacher] = f"the aggregator's word, not repeatable by the client: {reason}"
            continue
        repeat = _repeat_commitment_check if p.verifiable_noise else _repeat_vote_check
        outcome = repeat(p, public_key, session_id, keys, slot, teacher, votes)
        if outcome is None:
            unverified[teacher] = f"the aggregator's word, signature not verifiable: {reason}"
        else:
            verified[teacher] = outcome
    return verified, unverified


AS_FORWARDED = "repeated by the client on the votes and proofs the teacher signed"


def _repeat_vote_check(p: DpppParameters, public_key: ThresholdPublicKey, session_id: str,
                       keys: ContributionKeys | None, slot: SumSlot, teacher: int, votes: dppp_pb2.DpppVotes
                       ) -> str | None:
    """The aggregator's proven-votes check (aggregator/dppp.py, `_accept_proven`) on the forwarded votes: the
    teacher's signature on the folded vector, then its one-hot proofs, which must fail."""
    layout = p.layout(public_key.n)
    shape = (public_key, layout, p.queries, p.classes, p.share_range, votes.votes, votes.proven)
    try:
        folded = vote_proofs.folded(*shape, p.ensemble)
    except (ProtocolError, CryptoError) as error:
        return f"votes malformed ({error}); {AS_FORWARDED}"
    try:
        authenticate(keys, slot, teacher, bytes(folded.key_id), list(folded.values), votes.signature)
        binding.authenticate_proofs(keys, slot, teacher, public_key.key_id, binding.proofs_of(votes.proven),
                                    votes.proofs_signature)
    except ProtocolError:
        return None
    try:
        vote_proofs.check_and_fold(*shape, vote_proofs.context("dppp", session_id, teacher), p.ensemble)
    except MembershipProofInvalid as error:
        return f"vote proof failed: {error} ({AS_FORWARDED})"
    except (ProtocolError, CryptoError) as error:
        return f"votes malformed ({error}); {AS_FORWARDED}"
    raise lie(AGGREGATOR, f"it named teacher {teacher} as failing its vote proofs, which verify")


def _repeat_commitment_check(p: DpppParameters, public_key: ThresholdPublicKey, session_id: str,
                             keys: ContributionKeys | None, slot: SumSlot, teacher: int, votes: dppp_pb2.DpppVotes
                             ) -> str | None:
    """Verifiable noise, bits made in the round (aggregator/dppp.py, `_accept_commitments`): the teacher's
    signature on its commitments, then its vote proofs and its bit proofs, one of which must fail."""
    layout = p.layout(public_key.n)
    count = p.values * p.share_range
    try:
        vote_values = ciphertexts_from_proto(public_key, votes.proven.ciphertexts, p.queries * p.ensemble)
        bit_values = ciphertexts_from_proto(public_key, votes.noise_bits.ciphertexts, count)
    except (ProtocolError, CryptoError) as error:
        return f"commitments malformed ({error}); {AS_FORWARDED}"
    digest = noise_bits.commitment_digest(public_key, vote_values, bit_values)
    try:
        authenticate_commitment(keys, slot, teacher, public_key.key_id, digest, votes.signature)
        binding.authenticate_proofs(keys, slot, teacher, public_key.key_id,
                                    binding.proofs_of(votes.proven, votes.noise_bits), votes.proofs_signature)
    except ProtocolError:
        return None
    checks = [("vote proof failed", lambda: vote_proofs.checked(public_key, layout, p.queries, p.classes, votes.proven,
                                                                 vote_proofs.context("dppp", session_id, teacher),
                                                                 p.ensemble)),
              ("noise bit proof failed", lambda: noise_bits.check(public_key, count, votes.noise_bits,
                                                                  noise_bits.context("dppp", session_id, teacher)))]
    for name, check in checks:
        try:
            check()
        except MembershipProofInvalid as error:
            return f"{name}: {error} ({AS_FORWARDED})"
        except (ProtocolError, CryptoError) as error:
            return f"{name}, malformed: {error} ({AS_FORWARDED})"
    raise lie(AGGREGATOR, f"it named teacher {teacher} as failing a check of its commitments, which all verify")
