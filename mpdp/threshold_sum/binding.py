"""What binds a contribution to one sum (crypto.md, "Bound decryption"): the protocol, the session, the
sender, the slot of the protocol's schedule (a round) and the session's parameters as the contributor holds
them, signed by the contributor. A holder checks against its own parameters, so an opener that told the
contributors one τ (and so one noise share) and the holders another gets nothing decrypted.

`ContributionKeys` is what a role's host hands its sides: the role's own signer (if it contributes) and
the verifier of everyone else's signatures. In a plaintext deployment (or in-process twins) there are
none: contributions still carry the binding's checks (session, slot, each sender once, C recomputed),
but nothing authenticates the sender, as nothing authenticates it on such a transport either.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable

from mpdp.cryptocore.keys.contribution_signature import BadSignature, ContributionSigner, ContributionVerifier
from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.sessions.errors import denied

DOMAIN = b"mpdp/threshold-sum/contribution/v1"
COMMITMENT_DOMAIN = b"mpdp/threshold-sum/commitment/v1"
PROOFS_DOMAIN = b"mpdp/threshold-sum/proofs/v1"


@dataclass(frozen=True)
class SumSlot:
    """One threshold sum of a session: a key holder decrypts at most one per slot."""

    protocol: str
    session_id: str
    slot: int = 0
    terms: bytes = b""  # SHA-256 of the session's parameters (`of`)

    @classmethod
    def of(cls, protocol: str, session_id: str, parameters, slot: int = 0) -> "SumSlot":
        """The slot under the session's parameters (a dataclass with `to_proto`), as this role holds them."""
        encoded = parameters.to_proto().SerializeToString(deterministic=True)
        return cls(protocol, session_id, slot, hashlib.sha256(encoded).digest())

    def digest(self, sender: int, key_id: bytes, ciphertexts: Sequence[bytes]) -> bytes:
        """SHA-256(domain ‖ protocol ‖ session ‖ sender ‖ slot ‖ terms ‖ key id ‖ ciphertexts), each field
        length-prefixed."""
        return self._digest(DOMAIN, sender, key_id, ciphertexts)

    def commitment_digest(self, sender: int, key_id: bytes, commitment: bytes) -> bytes:
        """The same binding for a commitment made before the joint coin (verifiable noise): its own domain, so a
        signature on one is never a signature on a contribution."""
        return self._digest(COMMITMENT_DOMAIN, sender, key_id, [commitment])

    def proofs_digest(self, sender: int, key_id: bytes, proofs: Sequence[bytes]) -> bytes:
        """The same binding for a contribution's proofs as sent (serialised messages): who made a failing proof
        can then be shown, not only that the forwarded one fails (docs/client-checks.md)."""
        return self._digest(PROOFS_DOMAIN, sender, key_id, proofs)

    def _digest(self, domain: bytes, sender: int, key_id: bytes, ciphertexts: Sequence[bytes]) -> bytes:
        hasher = hashlib.sha256()
        fields = [domain, self.protocol.encode(), self.session_id.encode(), sender.to_bytes(4, "big"),
                  self.slot.to_bytes(8, "big"), self.terms, key_id, *ciphertexts]
        for field in fields:
            hasher.update(len(field).to_bytes(4, "big"))
            hasher.update(field)
        return hasher.digest()


@dataclass(frozen=True)
class ContributionKeys:
    """`covers(name, sender)`: the certificate name may speak for party `sender` (a host's range covers it)."""

    verifier: ContributionVerifier
    covers: Callable[[str, int], bool]
    signer: ContributionSigner | None = None

    def sign(self, digest: bytes) -> threshold_sum_pb2.ContributionSignature:
        if self.signer is None:
            raise ValueError("this role does not contribute to threshold sums")
        return threshold_sum_pb2.ContributionSignature(signature=self.signer.sign(digest),
                                                       certificate=self.signer.certificate)

    def check(self, sender: int, digest: bytes, signature: threshold_sum_pb2.ContributionSignature) -> None:
        """PERMISSION_DENIED unless `sender`'s own certificate signed `digest`."""
        try:
            name = self.verifier.verify(digest, bytes(signature.signature), bytes(signature.certificate))
        except BadSignature as error:
            raise denied(f"party {sender}'s contribution is not authenticated: {error}") from None
        if not self.covers(name, sender):
            raise denied(f"party {sender}'s contribution is signed by {name}, which does not speak for it")


def signature_for(keys: ContributionKeys | None, slot: SumSlot, sender: int, key_id: bytes,
                  ciphertexts: Sequence[bytes]) -> threshold_sum_pb2.ContributionSignature:
    """The contributor's signature (empty without keys: a plaintext deployment)."""
    if keys is None:
        return threshold_sum_pb2.ContributionSignature()
    return keys.sign(slot.digest(sender, key_id, ciphertexts))


def commitment_signature_for(keys: ContributionKeys | None, slot: SumSlot, sender: int, key_id: bytes,
                             commitment: bytes) -> threshold_sum_pb2.ContributionSignature:
    """The contributor's signature on its commitment digest (empty without keys)."""
    if keys is None:
        return threshold_sum_pb2.ContributionSignature()
    return keys.sign(slot.commitment_digest(sender, key_id, commitment))


def proofs_signature_for(keys: ContributionKeys | None, slot: SumSlot, sender: int, key_id: bytes,
                         proofs: Sequence[bytes]) -> threshold_sum_pb2.ContributionSignature:
    """The contributor's signature on its proofs (empty without keys)."""
    if keys is None:
        return threshold_sum_pb2.ContributionSignature()
    return keys.sign(slot.proofs_digest(sender, key_id, proofs))


def authenticate_proofs(keys: ContributionKeys | None, slot: SumSlot, sender: int, key_id: bytes,
                        proofs: Sequence[bytes], signature: threshold_sum_pb2.ContributionSignature) -> None:
    """Refuse proofs not signed by their sender for this slot (nothing to check without keys)."""
    if keys is not None:
        keys.check(sender, slot.proofs_digest(sender, key_id, proofs), signature)


def proofs_of(*messages) -> list[bytes]:
    """The signed form of a contribution's proof messages (ProvenVotes), each serialised deterministically."""
    return [message.SerializeToString(deterministic=True) for message in messages]


def authenticate_commitment(keys: ContributionKeys | None, slot: SumSlot, sender: int, key_id: bytes,
                            commitment: bytes, signature: threshold_sum_pb2.ContributionSignature) -> None:
    """Refuse a commitment not signed by its sender for this slot (nothing to check without keys)."""
    if keys is not None:
        keys.check(sender, slot.commitment_digest(sender, key_id, commitment), signature)


def authenticate(keys: ContributionKeys | None, slot: SumSlot, sender: int, key_id: bytes, ciphertexts: Sequence[bytes],
                 signature: threshold_sum_pb2.ContributionSignature) -> None:
    """Refuse a contribution not signed by its sender for this slot (nothing to check without keys)."""
    if keys is not None:
        keys.check(sender, slot.digest(sender, key_id, ciphertexts), signature)
