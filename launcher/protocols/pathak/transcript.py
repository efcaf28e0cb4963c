"""A Pathak session's transcript in its report, and `mpdp verify`'s re-check of a stored report from it
(docs/client-checks.md, "Verifying a stored report").

The transcript holds what the client received and nothing more: the session's parameters and the K + 1 shares of
K·ŵˢ the participants published to it (pathak.md Stage 3 step 4). Any K of those shares are uniform in Z_{2^R};
all of them sum to the release, which the report states anyway. Its size: (K + 1)·d values of R/8 = 16 bytes,
plus the parameters; base64 adds a third.

`verify` re-adds the shares, checks the sum against the honest range (as the client did before publishing) and
that it is the report's ŵˢ, recomputes the privacy line from the parameters (the paper's and the tight
calibration, to n_(1) or to n_min) and compares the message counts with the closed form. What no report can
carry: the openings of Stages 1–2 (they would name the smallest party or its n_j, which the protocol hides from
everyone), the local models and the noise (each party's own); and the shares are not signed: they reached the
client over mutual TLS, which leaves no proof a third party can check."""

from __future__ import annotations

import dataclasses
import json

from launcher.protocol import Report
from launcher.protocols.pathak.closed_form import closed_form
from launcher.protocols.stored_transcript import VerifyFailed, b64, now, unb64
from mpdp.proto.v1 import pathak_pb2
from mpdp.protocols.pathak import ring
from mpdp.protocols.pathak.parameters import PathakParameters
from mpdp.sessions.errors import ProtocolError

FORMAT = "mpdp/pathak-transcript/v1"
UNCHECKABLE = ("not checked, by design: the minimum's comparisons, the permutations and the selected noise (their "
               "openings would name the smallest party or its n_j, which the protocol hides from every role), the "
               "local models and η (each party's own), and who sent each share (the shares are unsigned; they "
               "reached the client over mutual TLS, which proves nothing to a third party)")


def transcript(parameters: PathakParameters, session_id: str, participants: list[str],
               shares: list[pathak_pb2.PathakPublishedShare]) -> dict:
    return {"format": FORMAT, "session_id": session_id,
            "parameters": b64(parameters.to_proto().SerializeToString(deterministic=True)),
            "shares": {participant: [b64(value) for value in share.share.values]
                       for participant, share in zip(participants, shares)},
            "recorded_at": now()}


def verify(report: Report, ca_certificate: bytes | None = None, public_key_pin=None) -> list[str]:
    """What was checked, one line each; VerifyFailed on the first thing that does not hold. Pathak's keys are the
    session's own (ξ, ζ), so neither a CA nor a threshold key takes part."""
    stored = report.get("transcript")
    if stored is None:
        parameters = parameters_of(report)
        if "w" not in report.get("result", {}):
            raise VerifyFailed("the report holds no released ŵˢ")
        return ["no transcript: the published shares cannot be re-added",
                _check_privacy(report, parameters) + " (the parameters as the report states them)",
                _check_counts(report), UNCHECKABLE]
    if stored.get("format") != FORMAT:
        raise VerifyFailed(f"the transcript's format is {stored.get('format')!r}, not {FORMAT}")
    if str(stored["session_id"]) != report.get("session_id"):
        raise VerifyFailed("the transcript is of another session than the report")
    try:
        parameters = PathakParameters.from_proto(pathak_pb2.PathakParameters.FromString(unb64(stored["parameters"])))
    except (ProtocolError, ValueError) as error:
        raise VerifyFailed(f"the transcript's parameters do not parse: {error}") from None
    if parameters_of(report) != parameters:
        raise VerifyFailed("the report's parameters are not the transcript's")
    lines = [_check_release(report, parameters, stored["shares"]), _check_privacy(report, parameters),
             _check_counts(report), UNCHECKABLE]
    return lines


def parameters_of(report: Report) -> PathakParameters:
    """The session's parameters as the report states them (`dataclasses.asdict` of them, with extras)."""
    given = report.get("parameters", {})
    try:
        return PathakParameters(**{f.name: given[f.name] for f in dataclasses.fields(PathakParameters)})
    except (KeyError, TypeError, ValueError, ProtocolError) as error:
        raise VerifyFailed(f"the report's parameters do not make a session: {error}") from None


def _check_release(report: Report, parameters: PathakParameters, shares: dict) -> str:
    """The K + 1 shares, one per participant, add up to K·2^F·ŵˢ inside the honest range, and ŵˢ is the report's."""
    expected = sorted([f"party/{j}" for j in range(1, parameters.parties + 1)] + ["curator/0"])
    if sorted(shares) != expected:
        raise VerifyFailed(f"the transcript's shares are from {sorted(shares)}, not the K + 1 participants")
    try:
        vectors = [ring.from_bytes([unb64(v) for v in values], parameters.dimension) for values in shares.values()]
    except (ProtocolError, ValueError) as error:
        raise VerifyFailed(f"a published share is malformed: {error}") from None
    total = ring.decode_signed(ring.add(vectors))
    bound = parameters.honest_sum_bound
    outside = sum(abs(value) > bound for value in total)
    if outside:
        raise VerifyFailed(f"the shares' sum leaves the honest range |T| ≤ {bound} in {outside} coordinates")
    released = [value / 2**parameters.fractional_bits / parameters.parties for value in total]
    if report.get("result", {}).get("w") != released:
        raise VerifyFailed("the report's ŵˢ is not the sum of the published shares")
    return (f"the {parameters.parties + 1} published shares add up to K·2^F·ŵˢ inside the honest range "
            f"|T| ≤ {bound}; ŵˢ (d = {parameters.dimension}) is the report's")


def _check_privacy(report: Report, parameters: PathakParameters) -> str:
    computed = json.loads(json.dumps(parameters.privacy_report()))
    if report.get("privacy") != computed:
        differing = sorted(k for k in computed.keys() | report.get("privacy", {}).keys()
                           if report.get("privacy", {}).get(k) != computed.get(k))
        raise VerifyFailed(f"the report's privacy line is not the one its parameters give ({', '.join(differing)})")
    return (f"privacy recomputed from the parameters: ε {computed.get('epsilon_effective', parameters.epsilon)} "
            f"({parameters.mechanism}, {parameters.calibration} calibration, to "
            f"{'n_min' if parameters.calibrate_to == 'n_min' else 'n_(1)'}, {parameters.noise_source} noise)")


def _check_counts(report: Report) -> str:
    """The operator's traffic (kept in `evaluator_view`, as it names π1's fixed points) against the closed form."""
    traffic = report.get("evaluator_view", {}).get("traffic")
    if traffic is None:
        return "no traffic in the report: message counts not checked"
    observed = {(row["from"], row["to"], row["rpc"]): row["messages"] for row in traffic
                if row["rpc"] == "AwaitResult" or row["rpc"].startswith("Step/pathak/")}
    expected = closed_form(report)
    if observed != expected:
        differing = sorted(set(observed) ^ set(expected) | {k for k in observed if observed[k] != expected.get(k)})
        raise VerifyFailed(f"the message counts are not the closed form's: {differing[:3]}")
    return f"message counts match the closed form for K = {report['parameters']['parties']} ({sum(observed.values())} messages)"
