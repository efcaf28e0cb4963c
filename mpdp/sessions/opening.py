"""A session starts on the client's word (threat-model.md): the client signs what a party spends its budget on —
the protocol, the session id, the session's parameters (ε, δ, K, τ, c, the noise …) and the public inputs it
computes on — with the private key of its own mTLS certificate, and the aggregator forwards the signature with the
opening. A party checks it before any computation or ledger charge, so an aggregator can neither open a session
by itself nor choose another ε, nor re-use the client's signature for another session id or protocol (a party
takes part in a session id once: party/resources.py).

The signature is ECDSA P-256 over

    SHA-256(domain ‖ protocol ‖ session id ‖ SHA-256(parameters) ‖ SHA-256(public inputs))

(each field length-prefixed), the parameters encoded as the signer's dataclass re-encodes them
(`to_proto().SerializeToString(deterministic=True)`, as `SumSlot.of` does), so the client and every party hash the
same bytes. Its verifier is the deployment CA's (mpdp.cryptocore.keys.contribution_signature), and the certificate must
name the client. In a plaintext deployment there is no key to sign with: nothing authenticates the client, as
nothing authenticates any peer on such a transport.
"""

from __future__ import annotations

import hashlib

from mpdp.cryptocore.keys.contribution_signature import BadSignature, ContributionSigner, ContributionVerifier
from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.sessions.errors import denied
from mpdp.sessions.identity import CLIENT

DOMAIN = b"mpdp/session/opening/v1"


def digest(protocol: str, session_id: str, parameters, public_inputs: bytes = b"") -> bytes:
    """What the client signs. `parameters`: the session's parameters dataclass (with `to_proto`); `public_inputs`:
    the serialized public data the parties compute on (DPPP's queries, Hamm's X_aux), empty for none."""
    encoded = parameters.to_proto().SerializeToString(deterministic=True)
    hasher = hashlib.sha256()
    for field in (DOMAIN, protocol.encode(), session_id.encode(), hashlib.sha256(encoded).digest(),
                  hashlib.sha256(public_inputs).digest()):
        hasher.update(len(field).to_bytes(4, "big"))
        hasher.update(field)
    return hasher.digest()


def sign(signer: ContributionSigner | None, protocol: str, session_id: str, parameters,
         public_inputs: bytes = b"") -> threshold_sum_pb2.ContributionSignature:
    """The client's signature on the opening (empty without a signer: a plaintext deployment)."""
    if signer is None:
        return threshold_sum_pb2.ContributionSignature()
    return threshold_sum_pb2.ContributionSignature(
        signature=signer.sign(digest(protocol, session_id, parameters, public_inputs)),
        certificate=signer.certificate)


def check(verifier: ContributionVerifier | None, protocol: str, session_id: str, parameters,
          signature: threshold_sum_pb2.ContributionSignature, public_inputs: bytes = b"") -> None:
    """PERMISSION_DENIED unless the client signed this opening (nothing to check without a verifier)."""
    if verifier is None:
        return
    if not signature.signature:
        raise denied(f"the client did not sign this {protocol} session's opening: it carries no signature")
    try:
        name = verifier.verify(digest(protocol, session_id, parameters, public_inputs), bytes(signature.signature),
                               bytes(signature.certificate))
    except BadSignature as error:
        raise denied(f"the client did not sign this {protocol} session's opening: {error}") from None
    if name != str(CLIENT):
        raise denied(f"this {protocol} session's opening is signed by {name}, not by the client")
