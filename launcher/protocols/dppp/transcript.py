"""A DPPP session's transcript in its report, and `mpdp verify`'s re-check of a stored report from it
(docs/client-checks.md, "Verifying a stored report").

The transcript holds what the client checked the release with: the session's parameters and the aggregator's
result as they crossed the wire (the signed contributions and every key holder's answer included), the
threshold public key and the deployment CA's certificate. Its size is bounded by the round's shape:
(K + ℓ)·P ciphertext-sized values (P packed ciphertexts per teacher, 2·|n| bits each), K signatures and
certificates (under 1 KiB each), ℓ batch proofs, and the votes of each teacher the aggregator blamed; base64
adds a third. `verify` repeats every check of `release.check_round` and compares the report's own fields
(labels, histograms, contributors, ε, the message counts) with what it computes."""

from __future__ import annotations

import hashlib
from collections import Counter

from launcher.protocol import Report
from launcher.protocols import stored_transcript
from launcher.protocols.stored_transcript import VerifyFailed
from mpdp.cryptocore.paillier import keyfiles
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.proto.v1 import dppp_pb2
from mpdp.protocols.dppp import release
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.sessions.errors import ProtocolError
from mpdp.vote_proofs.assurance import Assurance

FORMAT = "mpdp/dppp-transcript/v1"
PRIVACY_FIELDS = ("epsilon", "delta", "epsilon_per_query", "epsilon_all_queries", "total_tosses_required",
                  "tosses_per_teacher", "tosses_guaranteed", "contributors_counted")


def transcript(public_key: ThresholdPublicKey, ca_certificate: bytes | None, parameters: DpppParameters,
               session_id: str, key_holders: list[int], result: dppp_pb2.DpppRoundResult) -> dict:
    return {"format": FORMAT, "session_id": session_id, "key_holders": key_holders,
            "parameters": stored_transcript.b64(parameters.to_proto().SerializeToString(deterministic=True)),
            "result": stored_transcript.b64(result.SerializeToString(deterministic=True)),
            "public_key": keyfiles.public_key_to_dict(public_key),
            "ca_certificate": ca_certificate.decode() if ca_certificate is not None else None,
            # the moment the signatures are judged at when the transcript is verified later (certificates expire)
            "recorded_at": stored_transcript.now()}


def message_counts(teachers: int, holders: int, asked: int, answered: int, voted: int,
                   verifiable_noise: bool = False, committed: int = 0) -> Counter:
    """The closed form of a round's messages (dppp.md): the open, the queries to every teacher, a votes message
    from each that voted, the request to each holder asked and an answer from each that answered, a stand-down
    to every holder never asked; with verifiable noise, steps 2b–2d once per committed teacher."""
    counts = Counter({("client", "aggregator", "AwaitResult/dppp/open"): 1,
                      ("aggregator", "party", "Step/dppp/queries"): teachers,
                      ("party", "aggregator", "Step/dppp/votes"): voted,
                      ("aggregator", "party", "Step/dppp/decryption_request"): asked,
                      ("party", "aggregator", "Step/dppp/partial_decryptions"): answered,
                      ("aggregator", "party", "Step/dppp/stand_down"): holders - asked})
    if verifiable_noise:
        for label, direction in (("coin", ("aggregator", "party")), ("reveal", ("party", "aggregator")),
                                 ("shares", ("aggregator", "party")), ("flipped", ("party", "aggregator"))):
            counts[(*direction, f"Step/dppp/{label}")] = committed
    return +counts


def verify(report: Report, ca_certificate: bytes | None = None, public_key_pin: ThresholdPublicKey | None = None
           ) -> list[str]:
    """What was checked, one line each; VerifyFailed on the first thing that does not hold."""
    stored = report.get("transcript")
    if stored is None:
        return _without_transcript(report)
    public_key = stored_transcript.public_key(stored, FORMAT, public_key_pin)
    parameters = DpppParameters.from_proto(dppp_pb2.DpppParameters.FromString(stored_transcript.unb64(stored["parameters"])))
    parameters.calibrate()  # N the smallest for (ε, δ), as every role checks
    result = dppp_pb2.DpppRoundResult.FromString(stored_transcript.unb64(stored["result"]))
    session_id = str(stored["session_id"])
    if session_id != report.get("session_id"):
        raise VerifyFailed("the transcript is of another session than the report")
    pem = ca_certificate if ca_certificate is not None else (stored["ca_certificate"] or "").encode() or None
    keys = stored_transcript.keys(pem, stored.get("recorded_at"))
    try:
        checked = release.check_round(parameters, public_key, session_id, keys, list(stored["key_holders"]), result)
    except ProtocolError as error:
        raise VerifyFailed(str(error)) from None
    lines = [f"threshold key {public_key.key_id.hex()[:16]}… ({public_key.n.bit_length()}-bit, t = "
             f"{public_key.threshold} of {public_key.holders})"
             + (", as given" if public_key_pin is not None else ", as the transcript names it"),
             (f"{len(checked.contributors)} contributions signed by their senders under the CA "
              f"{hashlib.sha256(pem).hexdigest()[:16]}…" + (" (given)" if ca_certificate is not None else
                                                            " (as the transcript names it)"))
             if pem is not None else "a plaintext deployment: no signatures to check",
             f"C = Π contributions; {len(result.evidence.answers)} partial decryptions' proofs repeated, "
             f"{len(checked.rejected_shares)} failing; t = {public_key.threshold} combined: "
             f"holders {checked.decryptors}",
             f"histograms unpacked and centred; {len(checked.labels)} labels are their argmax",
             f"blame: {len(checked.rejected_votes)} repeated, {len(checked.unverified_blame)} not repeatable"]
    _compare_report(report, parameters, checked)
    lines.append("the report's labels, histograms, contributors, decryptors and exclusions are those computed here")
    lines.append(_check_privacy(report, parameters, len(checked.contributors)))
    lines.append(_check_counts(report, parameters, public_key, result, checked))
    return lines


def _compare_report(report: Report, parameters: DpppParameters, checked: release.CheckedRound) -> None:
    stated = report.get("result", {})
    claims = {"labels": (stated.get("labels"), checked.labels.tolist()),
              "histograms": (stated.get("histograms"), checked.histograms.tolist()),
              "contributors": (stated.get("contributors"), checked.contributors),
              "decryptors": (stated.get("decryptors"), checked.decryptors),
              "rejected shares": (sorted(stated.get("rejected_shares", {})),
                                  sorted(str(h) for h in checked.rejected_shares)),
              "rejected votes": (sorted(stated.get("rejected_votes", {})),
                                 sorted(str(t) for t in checked.rejected_votes))}
    for name, (claimed, computed) in claims.items():
        if claimed != computed:
            raise VerifyFailed(f"the report's {name} are not what its transcript gives")
    if report.get("parameters", {}).get("epsilon") != parameters.epsilon:
        raise VerifyFailed("the report's ε is not the transcript's")


def _check_privacy(report: Report, parameters: DpppParameters, contributors: int) -> str:
    computed = parameters.calibration.report(contributors)
    stated = report.get("privacy", {})
    for field in PRIVACY_FIELDS:
        if field in computed and stated.get(field) != computed[field]:
            raise VerifyFailed(f"the report's privacy {field} is {stated.get(field)}, the transcript's contributors "
                               f"give {computed[field]}")
    return (f"ε recomputed from the {contributors} verified contributors: {computed.get('epsilon_all_queries')} "
            f"over all queries (claimed ε = {parameters.epsilon})")


def _check_counts(report: Report, parameters: DpppParameters, public_key: ThresholdPublicKey,
                  result: dppp_pb2.DpppRoundResult, checked: release.CheckedRound) -> str:
    observed = Counter({(row["from"], row["to"], row["rpc"]): row["messages"] for row in report.get("traffic", [])
                        if row["rpc"].split("/")[1:2] == ["dppp"]})
    asked = observed.get(("aggregator", "party", "Step/dppp/decryption_request"), 0)
    voted = observed.get(("party", "aggregator", "Step/dppp/votes"), 0)
    committed = observed.get(("aggregator", "party", "Step/dppp/coin"), 0)
    if voted < len(checked.contributors) + len(checked.rejected_votes) + len(checked.unverified_blame):
        raise VerifyFailed(f"{voted} votes messages for {len(checked.contributors)} contributors and "
                           f"{len(checked.rejected_votes) + len(checked.unverified_blame)} excluded teachers")
    if asked < max(public_key.threshold, len(result.evidence.answers)):
        raise VerifyFailed(f"{asked} decryption requests for {len(result.evidence.answers)} answers and t = "
                           f"{public_key.threshold}")
    expected = message_counts(parameters.teachers, public_key.holders, asked, len(result.evidence.answers), voted,
                              parameters.verifiable_noise, committed)
    if observed != expected:
        differing = sorted(set(observed) ^ set(expected) | {k for k in observed if observed[k] != expected.get(k)})
        raise VerifyFailed(f"the message counts are not the closed form's: {differing[:3]}")
    return (f"message counts match the closed form: {parameters.teachers} queries, {voted} votes, {asked} of "
            f"{public_key.holders} holders asked, {len(result.evidence.answers)} answers")


def _without_transcript(report: Report) -> list[str]:
    """A report that carries no transcript: its internal consistency alone (no signature, proof or combination
    can be repeated), said as such. The ε of a Binomial report is recomputed from its stated parameters and
    contributors (which nothing here can confirm)."""
    stated, privacy = report.get("result", {}), report.get("privacy", {})
    histograms, labels = stated.get("histograms"), stated.get("labels")
    if histograms is None or labels is None:
        raise VerifyFailed("the report holds no histograms or labels")
    argmax = [max(range(len(row)), key=row.__getitem__) for row in histograms]
    if argmax != labels:
        raise VerifyFailed("the report's labels are not the argmax of its histograms")
    contributors = len(stated.get("contributors", []))
    lines = ["no transcript: signatures, proofs, C, the combination and the contributors cannot be checked",
             f"the {len(labels)} labels are the argmax of the report's histograms"]
    given = report.get("parameters", {})
    if given.get("noise", "binomial") != "binomial" or "total_tosses_required" not in privacy:
        return [*lines, "ε not recomputed: the report does not state a Binomial calibration"]
    try:
        parameters = DpppParameters(
            float(given["epsilon"]), float(given["delta"]), int(given["queries"]), int(given["classes"]),
            int(given["teachers"]), float(given["honest_fraction"]), bool(given.get("packed", True)), bytes(32),
            int(privacy["total_tosses_required"]), "binomial", 0, int(given.get("colluding", 1)),
            int(given.get("ensemble", 1)), Assurance.of_report(given))
        parameters.calibrate()
    except (KeyError, ProtocolError) as error:
        raise VerifyFailed(f"the report's parameters do not make a session: {error}") from None
    return [*lines, _check_privacy(report, parameters, contributors)
            + " (the parameters and contributors as the report states them)"]
