"""Errors of the cryptographic core. The services map them to gRPC statuses."""


class CryptoError(ValueError):
    """Base of every error the cryptographic core raises on bad input."""


class InvalidCiphertext(CryptoError):
    """A ciphertext is outside Z*_{n²} or has the wrong wire length."""


class InvalidKey(CryptoError):
    """A public key fails validation: sizes, ranges, degenerate elements or inconsistent parameters."""


class KeyMismatch(CryptoError):
    """A message names a key id other than the receiver's key."""


class InvalidShare(CryptoError):
    """A partial decryption failed its proof; `holder` names its key holder."""

    def __init__(self, holder: int, reason: str):
        super().__init__(f"partial decryption of key holder {holder} rejected: {reason}")
        self.holder = holder
        self.reason = reason


class NotEnoughShares(CryptoError):
    """Fewer than t valid partial decryptions; `rejected` names the bad ones."""

    def __init__(self, needed: int, valid: int, rejected: dict[int, str]):
        detail = f"; rejected holders: {sorted(rejected)}" if rejected else ""
        super().__init__(f"need {needed} valid partial decryptions, have {valid}{detail}")
        self.needed = needed
        self.valid = valid
        self.rejected = rejected


class EncodingOverflow(CryptoError):
    """A value does not fit its packing slot or fixed-point range."""


class ProtocolStateError(CryptoError):
    """A step was called out of order or twice."""
