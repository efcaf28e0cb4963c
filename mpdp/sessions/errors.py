"""Protocol errors, free of gRPC: the servicers map each kind to a status code."""

from __future__ import annotations

import enum

from mpdp.cryptocore.errors import CryptoError, ProtocolStateError
from mpdp.platform.unavailable import HelperUnavailable


class Kind(enum.Enum):
    INVALID_ARGUMENT = "malformed input, wrong sizes, wrong key or invalid ciphertext"
    FAILED_PRECONDITION = "unknown session, replay or step out of order"
    PERMISSION_DENIED = "the sender is not the role this step names"
    ABORTED = "the session was aborted"
    UNAVAILABLE = "a peer could not be reached"
    RESOURCE_EXHAUSTED = "the role holds as many running sessions as it may"
    DEADLINE_EXCEEDED = "the session timed out"


class ProtocolError(Exception):
    def __init__(self, kind: Kind, message: str):
        super().__init__(message)
        self.kind = kind


def invalid(message: str) -> ProtocolError:
    return ProtocolError(Kind.INVALID_ARGUMENT, message)


def precondition(message: str) -> ProtocolError:
    return ProtocolError(Kind.FAILED_PRECONDITION, message)


def denied(message: str) -> ProtocolError:
    return ProtocolError(Kind.PERMISSION_DENIED, message)


def exhausted(message: str) -> ProtocolError:
    return ProtocolError(Kind.RESOURCE_EXHAUSTED, message)


def aborted(message: str) -> ProtocolError:
    return ProtocolError(Kind.ABORTED, message)


def from_crypto(error: CryptoError) -> ProtocolError:
    """Cryptographic rejections are bad input, except steps taken out of order."""
    if isinstance(error, ProtocolStateError):
        return precondition(str(error))
    return invalid(str(error))


def refusal(error: Exception) -> ProtocolError | None:
    """What a failed step tells its caller: protocol errors as they are, cryptographic rejections as bad input,
    a helper process that died (the privacy accountant's) as retryable; None for anything else (a bug, which stays one)."""
    if isinstance(error, ProtocolError):
        return error
    if isinstance(error, CryptoError):
        return from_crypto(error)
    if isinstance(error, HelperUnavailable):
        return ProtocolError(Kind.UNAVAILABLE, str(error))
    return None


MAX_REASON_LENGTH = 200


def clean_reason(text: str) -> str:
    """An abort reason from a peer, safe to log and to show: control characters (newlines
    included) become spaces, and the length is bounded."""
    cleaned = "".join(ch if ch.isprintable() else " " for ch in str(text)[: 4 * MAX_REASON_LENGTH])
    cleaned = " ".join(cleaned.split())
    return cleaned if len(cleaned) <= MAX_REASON_LENGTH else cleaned[: MAX_REASON_LENGTH - 1] + "…"
