"""A Du session's transcript in its report, and `mpdp verify`'s re-check of a stored report from it
(docs/client-checks.md, "Verifying a stored report").

With secure aggregation the transcript holds what the client checked the release with: the session's parameters
and the server's `DuResult` as they crossed the wire (one `DuRoundEvidence` per round: every signed upload and
every key holder's answer), the key holders, the threshold public key and the deployment CA's certificate. Its
size is bounded by the run's shape: R rounds of (K + ℓ)·P ciphertext-sized values (P packed ciphertexts per
upload), K signatures and certificates (under 1 KiB each) and ℓ batch proofs, plus the R-round history and θ;
base64 adds a third. `verify` repeats `release.check_result` (every round's signatures, C, proofs, combination,
average, participants and step, the final θ) and compares the report's own fields and privacy line with what it
computes. A run in the clear has nothing the client could check, and so records no transcript."""

from __future__ import annotations

import hashlib
import json

from launcher.protocol import Report
from launcher.protocols.stored_transcript import VerifyFailed, keys, record, unb64
from launcher.protocols.stored_transcript import public_key as stored_public_key
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.proto.v1 import du_pb2
from mpdp.protocols.du import accounting, release
from mpdp.protocols.du.parameters import DuParameters
from mpdp.sessions.errors import ProtocolError

FORMAT = "mpdp/du-transcript/v1"


def transcript(public_key: ThresholdPublicKey, ca_certificate: bytes | None, parameters: DuParameters,
               session_id: str, key_holders: list[int], result: du_pb2.DuResult) -> dict:
    return record(FORMAT, session_id, key_holders, parameters, public_key, ca_certificate, result=result)


def verify(report: Report, ca_certificate: bytes | None = None, public_key_pin: ThresholdPublicKey | None = None
           ) -> list[str]:
    """What was checked, one line each; VerifyFailed on the first thing that does not hold."""
    stored = report.get("transcript")
    if stored is None:
        return _without_transcript(report)
    public_key = stored_public_key(stored, FORMAT, public_key_pin)
    parameters = DuParameters.from_proto(du_pb2.DuParameters.FromString(unb64(stored["parameters"])))
    result = du_pb2.DuResult.FromString(unb64(stored["result"]))
    session_id = str(stored["session_id"])
    if session_id != report.get("session_id"):
        raise VerifyFailed("the transcript is of another session than the report")
    if not parameters.secure_aggregation:
        raise VerifyFailed("the transcript is of a run in the clear, which has nothing to check")
    pem = ca_certificate if ca_certificate is not None else (stored["ca_certificate"] or "").encode() or None
    try:
        checked = release.check_result(parameters, public_key, session_id, keys(pem, stored.get("recorded_at")),
                                       list(stored["key_holders"]), result)
    except ProtocolError as error:
        raise VerifyFailed(str(error)) from None
    participants = checked["participants"]
    lines = [f"threshold key {public_key.key_id.hex()[:16]}… ({public_key.n.bit_length()}-bit, t = "
             f"{public_key.threshold} of {public_key.holders})"
             + (", as given" if public_key_pin is not None else ", as the transcript names it"),
             (f"every round's uploads signed by their senders under the CA {hashlib.sha256(pem).hexdigest()[:16]}…"
              + (" (given)" if ca_certificate is not None else " (as the transcript names it)"))
             if pem is not None else "a plaintext deployment: no signatures to check",
             f"{result.rounds} rounds: C = Π uploads, every partial decryption's proof repeated "
             f"({len(checked['rejected_shares'])} holders failing), t combined, the weighted average decoded and "
             f"bounded, participants and steps recomputed; θ is the last round's average"]
    _compare_report(report, parameters, result, checked)
    lines.append("the report's θ, rounds, history and exclusions are those computed here")
    lines.append(_check_privacy(report, parameters, result.rounds))
    lines.append(f"participants per round: {[len(participants[k]) for k in sorted(participants)]}")
    return lines


def _compare_report(report: Report, parameters: DuParameters, result: du_pb2.DuResult, checked: dict) -> None:
    stated = report.get("result", {})
    history = stated.get("history", [])
    claims = {
        "θ": (stated.get("theta"), list(result.theta)),
        "rounds": (stated.get("rounds"), result.rounds),
        "participants": ([h.get("participants") for h in history],
                         [checked["participants"][k] for k in sorted(checked["participants"])]),
        "steps": ([h.get("step_norm") for h in history], [h.step_norm for h in result.history]),
        "rejected shares": (sorted(stated.get("rejected_shares", {})), sorted(str(h) for h in checked["rejected_shares"])),
    }
    for name, (claimed, computed) in claims.items():
        if claimed != computed:
            raise VerifyFailed(f"the report's {name} are not what its transcript gives")
    given = report.get("parameters", {})
    for field, value in (("epsilon", parameters.epsilon), ("rounds", parameters.rounds), ("parties", parameters.parties),
                         ("method", parameters.method)):
        if given.get(field) != value:
            raise VerifyFailed(f"the report's {field} is {given.get(field)!r}, the transcript's {value!r}")


def _check_privacy(report: Report, parameters: DuParameters, rounds_run: int) -> str:
    computed = json.loads(json.dumps(accounting.report(parameters, rounds_run)))
    if report.get("privacy") != computed:
        differing = sorted(k for k in computed.keys() | report.get("privacy", {}).keys()
                           if report.get("privacy", {}).get(k) != computed.get(k))
        raise VerifyFailed(f"the report's privacy line is not the one its parameters give ({', '.join(differing)})")
    return (f"privacy recomputed from the parameters: ε {parameters.epsilon} per round, "
            f"{computed.get('epsilon_composed_basic')} over the round limit {parameters.rounds}")


def _without_transcript(report: Report) -> list[str]:
    """A report that carries no transcript (a run in the clear, or one stored before transcripts): its privacy
    line recomputed from the parameters it states (which nothing confirms), said as such."""
    given, stated = report.get("parameters", {}), report.get("result", {})
    if "theta" not in stated:
        raise VerifyFailed("the report holds no θ")
    lines = ["no transcript: uploads, signatures, proofs and the combination cannot be checked"
             + ("" if given.get("secure_aggregation") else " (uploads in the clear reach the server alone)")]
    try:
        parameters = DuParameters(
            method=str(given["method"]), epsilon=float(given["epsilon"]), delta=float(given["delta"]),
            rounds=int(given["rounds"]), tolerance=float(given["tolerance"]),
            local_epochs=int(given["local_epochs"]), learning_rate=float(given["learning_rate"]),
            regularization=float(given["lambda"]), parties=int(given["parties"]), dimension=int(given["dimension"]),
            bound=float(given["bound"]), secure_aggregation=bool(given["secure_aggregation"]),
            honest_fraction=float(given.get("honest_fraction", 1.0)), key_id=bytes(32),
            batch_size=int(given.get("batch_size", 256)))
        rounds_run = int(stated["rounds"])
    except (KeyError, TypeError, ValueError, ProtocolError) as error:
        raise VerifyFailed(f"the report's parameters do not make a session: {error}") from None
    if len(stated.get("history", [])) != rounds_run:
        raise VerifyFailed(f"the report states {rounds_run} rounds and a history of {len(stated.get('history', []))}")
    return [*lines, _check_privacy(report, parameters, rounds_run)
            + " (the parameters as the report states them)"]
