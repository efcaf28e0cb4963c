"""Who may send how much to which RPC, checked on the raw request before it is parsed.

gRPC reads a whole message (up to the server's receive limit) before any handler runs; parsing a large
body from a caller who may not send it would double the cost of the refusal. So the outermost server
interceptor takes each request as bytes, refuses it by its caller's certificate (and, for a large
envelope, by the sender it names in its first fields) and by its size, and only then parses it. After
a large request the process hands its freed memory back to the system.
"""

from __future__ import annotations

import asyncio
import logging

import grpc

from mpdp.proto.v1 import common_pb2, role_pb2
from mpdp.sessions.identity import CLIENT, Identity
from mpdp.wire import memory
from mpdp.wire.identity import Principal, principal_of

log = logging.getLogger(__name__)
SERVICE_PREFIX = "/mpdp.v1.Role/"
# The operator's RPCs: only the client's certificate may call them (their handlers check it again).
CLIENT_ONLY = frozenset({"AwaitResult", "GetTestRecord", "GetStatus", "GetTraffic"})
# Requests that carry no protocol message: a session id, an address, a reason.
SMALL_REQUEST_BYTES = 64 * 1024
SMALL = frozenset({"GetTestRecord", "GetStatus", "GetTraffic", "AbortSession"})
# From this size on an envelope must name its sender in its first fields (as every serializer writes it),
# so that a sender the caller may not speak for is refused unparsed.
LARGE_REQUEST_BYTES = 64 * 1024
LEADING_FIELDS = 8
_SENDER = role_pb2.Envelope.DESCRIPTOR.fields_by_name["sender"].number
_ABORT_SENDER = common_pb2.AbortRequest.DESCRIPTOR.fields_by_name["sender"].number


class Refused(Exception):
    def __init__(self, code: grpc.StatusCode, details: str):
        super().__init__(details)
        self.code = code
        self.details = details


def admit(method: str, principal: Principal | None, raw: bytes) -> None:
    """Refuse (Refused) a request its caller may not send, before it is parsed."""
    if principal is None:
        raise Refused(grpc.StatusCode.PERMISSION_DENIED, "the caller has no identity")
    if method in CLIENT_ONLY and principal.single != CLIENT:
        raise Refused(grpc.StatusCode.PERMISSION_DENIED, f"{principal} may not call this; expected {CLIENT}")
    if method in SMALL and len(raw) > SMALL_REQUEST_BYTES:
        raise Refused(grpc.StatusCode.RESOURCE_EXHAUSTED,
                      f"{method} takes at most {SMALL_REQUEST_BYTES} bytes, not {len(raw)}")
    if method == "Step" and len(raw) > LARGE_REQUEST_BYTES:
        text = leading_string(raw, _SENDER)
        try:
            sender = Identity.parse(text) if text is not None else None
        except ValueError:
            sender = None
        if sender is None:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                          f"a request of {len(raw)} bytes must name its sender in its first {LEADING_FIELDS} fields")
        if not principal.covers(sender):
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, f"{principal} may not speak for {sender}")


def leading_string(raw: bytes, number: int) -> str | None:
    """The string field `number` among the first LEADING_FIELDS top-level fields of a serialized message,
    found without parsing (or copying) the rest; None if it is not there or the bytes are malformed."""
    position = 0
    for _ in range(LEADING_FIELDS):
        if position >= len(raw):
            return None
        tag, position = _varint(raw, position)
        if tag is None:
            return None
        field, wire_type = tag >> 3, tag & 7
        if wire_type == 0:
            value, position = _varint(raw, position)
            if value is None:
                return None
        elif wire_type == 1:
            position += 8
        elif wire_type == 5:
            position += 4
        elif wire_type == 2:
            length, position = _varint(raw, position)
            if length is None or position + length > len(raw):
                return None
            if field == number:
                try:
                    return raw[position:position + length].decode()
                except UnicodeDecodeError:
                    return None
            position += length
        else:
            return None
    return None


def _varint(raw: bytes, position: int) -> tuple[int | None, int]:
    value = 0
    for shift in range(0, 70, 7):
        if position >= len(raw):
            return None, position
        byte = raw[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, position
    return None, position


class AdmissionInterceptor(grpc.aio.ServerInterceptor):
    """The outermost interceptor: the role's RPCs receive raw bytes, admitted, then parsed."""

    def __init__(self, release_after_bytes: int = memory.RELEASE_AFTER_BYTES):
        self._release_after_bytes = release_after_bytes

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        path = handler_call_details.method
        if handler is None or handler.unary_unary is None or not path.startswith(SERVICE_PREFIX):
            return handler
        method = path[len(SERVICE_PREFIX):]
        inner, deserialize, release_after = handler.unary_unary, handler.request_deserializer, self._release_after_bytes

        async def admitted(raw: bytes, context):
            size = len(raw)
            try:
                refusal: Refused | None = None
                try:
                    admit(method, principal_of(context), raw)
                except Refused as refused:
                    refusal = refused
                else:
                    request = deserialize(raw) if deserialize is not None else raw
                del raw  # a refusal's traceback must not keep it alive; the parsed request holds what is needed
                if refusal is not None:
                    log.info("%s refused: %s (%s)", method, refusal.details, refusal.code.name)
                    await context.abort(refusal.code, refusal.details)
                return await inner(request, context)
            finally:
                if size >= release_after:
                    memory.release_soon(asyncio.get_running_loop())

        return grpc.unary_unary_rpc_method_handler(admitted, request_deserializer=None,
                                                   response_serializer=handler.response_serializer)
