"""A Hamm session's transcript in its report, and `mpdp verify`'s re-check of a stored report from it
(docs/client-checks.md, "Verifying a stored report").

The transcript holds only what may be public: the session's parameters, the key holders, the threshold public
key, the deployment CA's certificate and the signed votes Charlie counted (`HammResult.votes`: each voter's packed
ciphertexts under the threshold key, which every key holder is sent too, with its signature; no proofs). It never
holds the holders' partial decryptions: any t of them open the counts, which only Charlie may see (hamm.md). Its
size: M′ contributions of P ciphertexts of 2·|n| bits (P = the packed plaintexts of N·C slots) plus one signature
and certificate each (under 1 KiB), the key and the CA certificate; base64 adds a third.

`verify` repeats what Charlie checked of the votes (`decryption.check_request`: every sender once, known, at
least ⌈τM⌉ of them, every signature under the CA for this session's slot, P ciphertexts each), computes C, and
recomputes from the M′ verified voters the privacy line and the malicious-party line, and compares the report's
contributors and message counts (the closed form) with them. The combination, the counts, the labels and the
weights cannot be checked by anyone but Charlie: they need the partial decryptions and Charlie's secret η."""

from __future__ import annotations

import hashlib
import json
import math

from launcher.protocol import Report
from launcher.protocols.hamm.closed_form import closed_form
from launcher.protocols.stored_transcript import VerifyFailed, keys, record, unb64
from launcher.protocols.stored_transcript import public_key as stored_public_key
from mpdp.cryptocore.errors import CryptoError
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.privacy.collusion import COLLUDING_CONTRIBUTORS
from mpdp.proto.v1 import hamm_pb2, threshold_sum_pb2
from mpdp.protocols.hamm.parameters import HammParameters
from mpdp.protocols.hamm.release import Release
from mpdp.sessions.errors import ProtocolError
from mpdp.threshold_sum.binding import SumSlot
from mpdp.threshold_sum.decryption import check_request
from mpdp.vote_proofs import influence
from mpdp.vote_proofs.assurance import Assurance

FORMAT = "mpdp/hamm-transcript/v1"
UNCHECKABLE = ("not checked, by design: the combination, the counts and the weights. The key holders' partial "
               "decryptions would open the counts, which only Charlie sees, so no report carries them; and w_p = "
               "w_s + η needs Charlie's secret η")


def transcript(public_key: ThresholdPublicKey, ca_certificate: bytes | None, parameters: HammParameters,
               session_id: str, key_holders: list[int], result: hamm_pb2.HammResult) -> dict:
    return record(FORMAT, session_id, key_holders, parameters, public_key, ca_certificate, votes=result.votes)


def verify(report: Report, ca_certificate: bytes | None = None, public_key_pin: ThresholdPublicKey | None = None
           ) -> list[str]:
    """What was checked, one line each; VerifyFailed on the first thing that does not hold."""
    stored = report.get("transcript")
    if stored is None:
        return _without_transcript(report)
    public_key = stored_public_key(stored, FORMAT, public_key_pin)
    try:
        parameters = HammParameters.from_proto(hamm_pb2.HammParameters.FromString(unb64(stored["parameters"])))
        votes = threshold_sum_pb2.DecryptionRequest.FromString(unb64(stored["votes"]))
    except (ProtocolError, ValueError) as error:
        raise VerifyFailed(f"the transcript's parameters or votes do not parse: {error}") from None
    session_id = str(stored["session_id"])
    if session_id != report.get("session_id"):
        raise VerifyFailed("the transcript is of another session than the report")
    if parameters.key_id != public_key.key_id:
        raise VerifyFailed("the session's parameters name another threshold key than the transcript's")
    pem = ca_certificate if ca_certificate is not None else (stored["ca_certificate"] or "").encode() or None
    ciphertexts = parameters.layout(public_key.n).plaintexts_needed(parameters.values)
    try:
        aggregate, contributors = check_request(public_key, votes, SumSlot.of("hamm", session_id, parameters),
                                                keys(pem, stored.get("recorded_at")), parameters.parties,
                                                parameters.min_contributors, ciphertexts)
    except (ProtocolError, CryptoError) as error:
        raise VerifyFailed(f"the votes do not verify: {error}") from None
    _compare_report(report, parameters, contributors)
    holders = list(stored["key_holders"])
    _check_holders(report, public_key, holders)
    width = (2 * public_key.n.bit_length() + 7) // 8
    digest = hashlib.sha256(b"".join(int(c).to_bytes(width, "big") for c in aggregate)).hexdigest()
    return [f"threshold key {public_key.key_id.hex()[:16]}… ({public_key.n.bit_length()}-bit, t = "
            f"{public_key.threshold} of {public_key.holders})"
            + (", as given" if public_key_pin is not None else ", as the transcript names it"),
            (f"the votes of {len(contributors)} voters signed by their senders under the CA "
             f"{hashlib.sha256(pem).hexdigest()[:16]}…" + (" (given)" if ca_certificate is not None
                                                          else " (as the transcript names it)"))
            if pem is not None else f"a plaintext deployment: {len(contributors)} voters' votes, no signatures",
            f"every voter once, at least ⌈τM⌉ = {parameters.min_contributors} of M = {parameters.parties}, "
            f"{ciphertexts} ciphertexts each; C = Π votes computed here ({len(aggregate)} ciphertexts, SHA-256 "
            f"{digest[:16]}…)",
            "the report's parameters, voters M′ and contributors are those of the transcript",
            _check_privacy(report, parameters, len(contributors)),
            _check_counts(report, len(holders), public_key.threshold, len(contributors)),
            UNCHECKABLE]


def _compare_report(report: Report, parameters: HammParameters, contributors: list[int]) -> None:
    given, stated = report.get("parameters", {}), report.get("result", {})
    for field, value in (("epsilon", None if parameters.epsilon == math.inf else parameters.epsilon),
                         ("delta", parameters.delta), ("lambda", parameters.regularization),
                         ("parties", parameters.parties), ("method", parameters.method),
                         ("classes", parameters.classes), ("aux_points", parameters.aux_points),
                         ("dimension", parameters.dimension), ("noisy_counts", parameters.noisy_counts),
                         ("protect_aux", parameters.protect_aux), ("honest_fraction", parameters.honest_fraction),
                         ("count_noise", parameters.count_noise), ("proven_votes", parameters.proven_votes),
                         ("verifiable_noise", parameters.verifiable_noise)):
        if given.get(field) != value:
            raise VerifyFailed(f"the report's {field} is {given.get(field)!r}, the transcript's {value!r}")
    if stated.get("contributors") != contributors:
        raise VerifyFailed(f"the report names contributors {stated.get('contributors')}, the signed votes are of "
                           f"{contributors}")
    if stated.get("voters") != len(contributors):
        raise VerifyFailed(f"the report states M′ = {stated.get('voters')} voters, the signed votes are of "
                           f"{len(contributors)}")


def _check_holders(report: Report, public_key: ThresholdPublicKey, holders: list[int]) -> None:
    """The report's decryptors are t key holders, none of them also named as failing."""
    stated = report.get("result", {})
    decryptors, rejected = stated.get("decryptors", []), {int(h) for h in stated.get("rejected_shares", {})}
    if len(set(decryptors)) != public_key.threshold or not set(decryptors) <= set(holders) or rejected & set(decryptors):
        raise VerifyFailed(f"the report's decryptors {decryptors} are not t = {public_key.threshold} distinct key "
                           f"holders that did not fail")
    excluded = {int(h) for h in stated.get("rejected_votes", {})}
    if excluded & set(stated.get("contributors", [])):
        raise VerifyFailed(f"the report names voters {sorted(excluded)} as failing and counts them")


def _check_privacy(report: Report, parameters: HammParameters, voters: int) -> str:
    """The privacy and malicious-party lines recomputed from the parameters and the M′ voters: Release.report
    (ε, Δ, ‖η‖'s scale; with noisy counts the tosses and the delivered ε) and the client's `one_voter`."""
    computed = json.loads(json.dumps(Release(parameters, voters).report()))
    if report.get("privacy") != computed:
        differing = sorted(k for k in computed.keys() | report.get("privacy", {}).keys()
                           if report.get("privacy", {}).get(k) != computed.get(k))
        raise VerifyFailed(f"the report's privacy line is not the one its parameters give ({', '.join(differing)})")
    if "malicious_party" in report:
        line = json.loads(json.dumps(influence.one_voter(
            "voter", parameters.assurance, parameters.share_range if parameters.noisy_counts else 0, voters,
            parameters.vote_width)))
        if report["malicious_party"] != line:
            raise VerifyFailed("the report's malicious-party line is not the one its parameters give")
    delivered = computed.get("epsilon_delivered", computed.get("epsilon"))
    return (f"privacy recomputed from the parameters and M′ = {voters}: ε {delivered}"
            + (f", ‖η‖ ~ Gamma(D, {computed['noise_norm_scale']:.6g})" if "noise_norm_scale" in computed else "")
            + ("; the malicious-party line too" if "malicious_party" in report else ""))


def _check_counts(report: Report, holders: int, threshold: int, voters: int) -> str:
    """The observed messages against the closed form: every kind exact but the votes and the joint coin's steps
    (M′ to M: a party may drop out) and the partial decryptions (t to ℓ: a holder may be unreachable)."""
    if "traffic" not in report:
        return "no traffic in the report: message counts not checked"
    observed = {(row["from"], row["to"], row["rpc"]): row["messages"] for row in report["traffic"]
                if row["rpc"].split("/")[1:2] == ["hamm"]}
    expected = closed_form({**report, "parameters": {**report.get("parameters", {}), "key_holders": holders}})
    parties = int(report["parameters"]["parties"])
    ranges = {("party", "aggregator", "Step/hamm/votes"): (voters, parties),
              ("party", "curator", "Step/hamm/partial_decryptions"): (threshold, holders)}
    if report["parameters"].get("verifiable_noise"):  # the joint coin's steps: with each voter that got that far
        ranges |= {key: (voters, parties) for key in expected if key[2].split("/")[-1] in ("coin", "reveal", "shares",
                                                                                           "flipped")}
    for key in set(observed) | set(expected):
        low, high = ranges.get(key, (expected.get(key, 0), expected.get(key, 0)))
        if not low <= observed.get(key, 0) <= high:
            raise VerifyFailed(f"the message counts are not the closed form's: {key} {observed.get(key, 0)}, "
                               f"expected {low if low == high else f'{low} to {high}'}")
    return (f"message counts match the closed form: {parties} queries, "
            f"{observed.get(('party', 'aggregator', 'Step/hamm/votes'), 0)} votes, {holders} decryption requests, "
            f"{observed.get(('party', 'curator', 'Step/hamm/partial_decryptions'), 0)} partial decryptions")


def parameters_of(report: Report) -> HammParameters:
    """The session's parameters as a report states them (which nothing confirms without a transcript)."""
    given = report.get("parameters", {})
    try:
        return HammParameters(
            str(given["method"]), math.inf if given["epsilon"] is None else float(given["epsilon"]),
            float(given["delta"]), float(given["lambda"]), int(given["classes"]), int(given["parties"]),
            int(given["aux_points"]), int(given["dimension"]), bool(given["noisy_counts"]), bool(given["protect_aux"]),
            float(given["honest_fraction"]), bytes(32), str(given.get("count_noise", "binomial")),
            int(given.get("colluding", COLLUDING_CONTRIBUTORS)), Assurance.of_report(given))
    except (KeyError, TypeError, ValueError, ProtocolError) as error:
        raise VerifyFailed(f"the report's parameters do not make a session: {error}") from None


def _without_transcript(report: Report) -> list[str]:
    """A report stored before transcripts: its privacy line, malicious-party line and message counts recomputed
    from the parameters and voters it states, said as such."""
    stated = report.get("result", {})
    if "weights" not in stated:
        raise VerifyFailed("the report holds no released weights")
    parameters = parameters_of(report)
    contributors = stated.get("contributors", [])
    if stated.get("voters") != len(contributors) or len(set(contributors)) != len(contributors):
        raise VerifyFailed(f"the report states M′ = {stated.get('voters')} voters and names {len(contributors)} "
                           "distinct contributors")
    if len(contributors) < parameters.min_contributors:
        raise VerifyFailed(f"{len(contributors)} contributors, fewer than ⌈τM⌉ = {parameters.min_contributors}")
    holders = int(report["parameters"].get("key_holders", parameters.parties))
    threshold = len(stated.get("decryptors", []))
    return ["no transcript: signatures, C and the contributors cannot be checked",
            _check_privacy(report, parameters, len(contributors))
            + " (the parameters and voters as the report states them)",
            _check_counts(report, holders, threshold, len(contributors)),
            UNCHECKABLE]
