"""Envelopes: a protocol's message between two logical roles, and back.

Knows protocols only through the registry it is given: an Envelope field named like the protocol
carries it; a protocol without a field travels packed in `extension`.
"""

from __future__ import annotations

from mpdp.proto.v1 import role_pb2
from mpdp.sessions.errors import invalid
from mpdp.sessions.identity import Identity
from mpdp.sessions.protocol import RoleProtocol

EXTENSION = "extension"
_FIELDS = set(role_pb2.Envelope.DESCRIPTOR.fields_by_name)


def identities(envelope: role_pb2.Envelope) -> tuple[Identity, Identity]:
    try:
        return Identity.parse(envelope.sender), Identity.parse(envelope.receiver)
    except ValueError as error:
        raise invalid(f"envelope address: {error}") from None


def unwrap(envelope: role_pb2.Envelope, protocols: dict[str, RoleProtocol]) -> tuple[RoleProtocol, str, object]:
    """(protocol, kind, body) of an envelope that carries a message; INVALID_ARGUMENT otherwise."""
    field = envelope.WhichOneof("body")
    if field is None:
        raise invalid("the envelope carries no message")
    if field == EXTENSION:
        type_name = envelope.extension.TypeName()
        protocol = next((p for p in protocols.values() if p.message_type.DESCRIPTOR.full_name == type_name
                         and p.name not in _FIELDS), None)
        if protocol is None:
            raise invalid(f"this role runs no protocol with messages of type {type_name!r}")
        message = protocol.message_type()
        if not envelope.extension.Unpack(message):
            raise invalid(f"the {protocol.name} message could not be parsed")
    else:
        protocol = protocols.get(field)
        if protocol is None:
            raise invalid(f"this role takes no part in {field}")
        message = getattr(envelope, field)
    kind = message.WhichOneof("body")
    if kind is None:
        raise invalid(f"the {protocol.name} message has no body")
    return protocol, kind, getattr(message, kind)


def wrap(session_id: str, sender: Identity, receiver: Identity, protocol: RoleProtocol | None = None,
         kind: str | None = None, body=None) -> role_pb2.Envelope:
    envelope = role_pb2.Envelope(session_id=session_id, sender=str(sender), receiver=str(receiver))
    if protocol is not None and kind is not None:
        message = protocol.message_type(**{kind: body})
        if protocol.name in _FIELDS:
            getattr(envelope, protocol.name).CopyFrom(message)
        else:
            envelope.extension.Pack(message)
    return envelope
