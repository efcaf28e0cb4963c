"""What every protocol's stored-report verifier shares (docs/client-checks.md, "Verifying a stored report"): the
failure it raises, the transcript's encoding, and the signatures' checker judging certificates at the session's
time."""

from __future__ import annotations

import base64
import datetime

from mpdp.cryptocore.keys.contribution_signature import ContributionVerifier
from mpdp.threshold_sum.binding import ContributionKeys


class VerifyFailed(ValueError):
    """The stored report does not hold up: one line says what."""


def now() -> str:
    """When a transcript is recorded: the moment its signatures are judged at when it is verified later."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def keys(pem: bytes | None, recorded_at: str | None) -> ContributionKeys | None:
    """The signatures' checker, judging certificates at the session's time: the transcript's, or for one that
    records none, the CA's issue time (the deployment's start, when every certificate it issued was valid)."""
    if pem is None:
        return None
    from cryptography import x509

    from launcher.deployment.serve import speaks_for

    ca = x509.load_pem_x509_certificate(pem)
    at = datetime.datetime.fromisoformat(recorded_at) if recorded_at else ca.not_valid_before_utc
    return ContributionKeys(ContributionVerifier(ca, at), speaks_for)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def unb64(text: str) -> bytes:
    return base64.b64decode(text.encode(), validate=True)


def public_key(stored: dict, format_name: str, pin=None):
    """The threshold key a transcript of `format_name` records, after checking its format and, given `pin`
    (`mpdp verify --public-key`), that it is the pinned key."""
    from mpdp.cryptocore.paillier import keyfiles

    if stored.get("format") != format_name:
        raise VerifyFailed(f"the transcript's format is {stored.get('format')!r}, not {format_name}")
    key = keyfiles.public_key_from_dict(stored["public_key"])
    if pin is not None and pin != key:
        raise VerifyFailed("the transcript's threshold key is not the one given with --public-key")
    return key


def record(format_name: str, session_id: str, key_holders: list[int], parameters, public_key, ca_certificate: bytes | None,
           **messages) -> dict:
    """A threshold-sum protocol's transcript: its format, the session, the key holders, the parameters, the key
    and the CA certificate its signatures are judged under, and each named protobuf message, base64-encoded."""
    from mpdp.cryptocore.paillier import keyfiles

    return {"format": format_name, "session_id": session_id, "key_holders": list(key_holders),
            "parameters": b64(parameters.to_proto().SerializeToString(deterministic=True)),
            **{name: b64(message.SerializeToString(deterministic=True)) for name, message in messages.items()},
            "public_key": keyfiles.public_key_to_dict(public_key),
            "ca_certificate": ca_certificate.decode() if ca_certificate is not None else None,
            "recorded_at": now()}
