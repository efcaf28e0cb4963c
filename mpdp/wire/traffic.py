"""Per-session traffic accounting by client and server interceptors.

Every RPC whose request carries a `session_id` is recorded by the server
(sender = the caller's identity) and by the client (receiver = the channel's
peer), with the serialized request and response sizes and a call id the
client puts in the metadata. A report takes the union of both sides' records
by call id, so every RPC counts exactly once, even when one side has died.
"""

from __future__ import annotations

import secrets
import time
from collections import Counter, defaultdict
from dataclasses import dataclass

import grpc

from mpdp.proto.v1 import common_pb2
from mpdp.sessions.identity import Identity
from mpdp.sessions.registry import MAX_SESSION_ID_LENGTH
from mpdp.wire.identity import SENDER_METADATA_KEY, Principal, principal_of

CALL_ID_METADATA_KEY = "x-mpdp-call-id"
UNPARSEABLE = object()  # what a request that fails to deserialize becomes


@dataclass(frozen=True)
class TrafficRecord:
    sender: str
    receiver: str
    rpc: str
    request_bytes: int
    response_bytes: int
    status: str
    observed_by: str
    call_id: str = ""
    started_ns: int = 0  # when this side saw the call start (Unix ns)
    finished_ns: int = 0  # when this side saw it end: the server's reply, the caller's answer (Unix ns)


MAX_RECORDS_PER_SESSION = 20_000  # far above an honest session's (K = 32 Pathak: about 3 500)


class TrafficLog:
    """Bounded: at most `max_sessions` sessions of at most MAX_RECORDS_PER_SESSION records each. A refused call
    that names no session this log knows (an unknown id, an overlong one) is only counted, by method and status."""

    def __init__(self, max_sessions: int = 256):
        self._records: dict[str, list[TrafficRecord]] = defaultdict(list)
        self._max_sessions = max_sessions
        self.refused_unknown: Counter[tuple[str, str]] = Counter()
        self.dropped: Counter[str] = Counter()

    def add(self, session_id: str, record: TrafficRecord) -> None:
        known = session_id in self._records
        if not known and (record.status != "OK" or len(session_id) > MAX_SESSION_ID_LENGTH):
            self.refused_unknown[(record.rpc, record.status)] += 1
            return
        if not known and len(self._records) >= self._max_sessions:
            self._records.pop(next(iter(self._records)))
        records = self._records[session_id]
        if len(records) >= MAX_RECORDS_PER_SESSION:
            self.dropped[session_id] += 1
            return
        records.append(record)

    def records(self, session_id: str) -> list[TrafficRecord]:
        return list(self._records.get(session_id, ()))


def _session_of(request) -> str:
    return getattr(request, "session_id", "") or ""


def _size(message) -> int:
    return message.ByteSize() if message is not None else 0


def new_call_id() -> str:
    return secrets.token_hex(8)


def label_of(method: str, request) -> str:
    """The method, then the kind of each nested `body` oneof: `Step/pathak/commitment`."""
    label, message = method, request
    while "body" in getattr(getattr(message, "DESCRIPTOR", None), "oneofs_by_name", {}):
        kind = message.WhichOneof("body")
        if not kind:
            break
        label, message = f"{label}/{kind}", getattr(message, kind)
    return label


def _logical(request, field: str, principal: Principal | None) -> str:
    """The logical role a request names in `field` if `principal` may speak for it; else the principal."""
    named = getattr(request, field, "") if request is not UNPARSEABLE else ""
    if named and principal is not None:
        try:
            if principal.covers(Identity.parse(named)):
                return named
        except ValueError:
            pass
    return str(principal) if principal is not None else "unknown"


def call_id_of(context) -> str:
    """The call id the caller gave this call ("" if none)."""
    for key, value in context.invocation_metadata() or ():
        if key == CALL_ID_METADATA_KEY:
            return value[:64]
    return ""


class ServerTrafficInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, log: TrafficLog, me: Principal):
        self._log = log
        self._me = me

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        method = handler_call_details.method.rsplit("/", 1)[-1]
        inner, log, me = handler.unary_unary, self._log, self._me
        deserialize = handler.request_deserializer

        def parse(data: bytes):
            try:
                return deserialize(data)
            except Exception:  # malformed bytes: refused below with INVALID_ARGUMENT, not UNKNOWN and a traceback
                return UNPARSEABLE

        async def recorded(request, context):
            if request is UNPARSEABLE:
                log.refused_unknown[(method, "INVALID_ARGUMENT")] += 1
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{method}: the request could not be parsed")
            session_id = _session_of(request)
            rpc = label_of(method, request)
            started = time.time_ns()
            response, status = None, "OK"
            try:
                response = await inner(request, context)
                return response
            except BaseException:
                code = context.code()
                status = code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
                raise
            finally:
                if session_id:
                    log.add(
                        session_id,
                        TrafficRecord(_logical(request, "sender", principal_of(context)), _logical(request, "receiver", me),
                                      rpc, _size(request), _size(response), status, "server", call_id_of(context),
                                      started, time.time_ns()),
                    )

        return grpc.unary_unary_rpc_method_handler(
            recorded,
            request_deserializer=parse,
            response_serializer=handler.response_serializer,
        )


class ClientTrafficInterceptor(grpc.aio.UnaryUnaryClientInterceptor):
    """Declares the caller's identity and records each call it makes."""

    def __init__(self, log: TrafficLog, me: Principal, peer: Principal):
        self._log = log
        self._me = me
        self._peer = peer

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        given = list(client_call_details.metadata or ())
        # A retried message keeps the call id its sender gave it, so it counts once.
        call_id = next((value for key, value in given if key == CALL_ID_METADATA_KEY), None) or new_call_id()
        metadata = [(key, value) for key, value in given if key != CALL_ID_METADATA_KEY] + [
            (SENDER_METADATA_KEY, str(self._me)), (CALL_ID_METADATA_KEY, call_id)]
        details = client_call_details._replace(metadata=grpc.aio.Metadata(*metadata))
        started = time.time_ns()
        call = await continuation(details, request)
        session_id = _session_of(request)
        sender, receiver = _logical(request, "sender", self._me), _logical(request, "receiver", self._peer)
        method = client_call_details.method
        rpc = label_of((method.decode() if isinstance(method, bytes) else method).rsplit("/", 1)[-1], request)
        try:
            response = await call
        except grpc.aio.AioRpcError as error:
            if session_id:
                self._log.add(session_id, TrafficRecord(sender, receiver, rpc, _size(request), 0,
                                                        error.code().name, "client", call_id, started, time.time_ns()))
            raise
        if session_id:
            self._log.add(session_id, TrafficRecord(sender, receiver, rpc, _size(request), _size(response),
                                                    "OK", "client", call_id, started, time.time_ns()))
        return call


def _split(identity: str) -> tuple[str, int]:
    role, _, number = identity.partition("/")
    return role, int(number) if number.isdigit() else 0


def traffic_reply(log: TrafficLog, session_id: str) -> common_pb2.TrafficReply:
    """A role's own records of one session, for the client's report."""
    records = []
    for record in log.records(session_id):
        from_role, from_id = _split(record.sender)
        to_role, to_id = _split(record.receiver)
        records.append(common_pb2.TrafficRecord(
            from_role=from_role, from_id=from_id, to_role=to_role, to_id=to_id, rpc=record.rpc,
            request_bytes=record.request_bytes, response_bytes=record.response_bytes,
            status=record.status, observed_by=record.observed_by, call_id=record.call_id,
            started_ns=record.started_ns, finished_ns=record.finished_ns,
        ))
    return common_pb2.TrafficReply(records=records)


def merge_views(server_side: list[dict], client_side: list[dict]) -> list[dict]:
    """One row per RPC: the server's record, or the client's where the server's is lost."""
    merged = {row["call_id"] or f"server-{index}": row for index, row in enumerate(server_side)}
    for row in client_side:
        if row["call_id"] and row["call_id"] not in merged:
            merged[row["call_id"]] = row
    return list(merged.values())


def summarise(records: list[dict]) -> list[dict]:
    """`{from, to, rpc, messages, bytes}` by role pair and method (ids folded into roles).

    `records` are dicts with from_role, to_role, rpc, request_bytes, response_bytes.
    """
    totals: dict[tuple[str, str, str], dict] = {}
    for record in records:
        key = (record["from_role"], record["to_role"], record["rpc"])
        entry = totals.setdefault(key, {"from": key[0], "to": key[1], "rpc": key[2], "messages": 0, "bytes": 0,
                                        "request_bytes": 0, "response_bytes": 0})
        entry["messages"] += 1
        entry["request_bytes"] += record["request_bytes"]
        entry["response_bytes"] += record["response_bytes"]
        entry["bytes"] += record["request_bytes"] + record["response_bytes"]
    return sorted(totals.values(), key=lambda e: (e["from"], e["to"], e["rpc"]))
