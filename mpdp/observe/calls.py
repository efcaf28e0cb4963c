"""What the observe interceptors may say about one RPC: its method, its kind, sizes, status and the roles at
either end. Built from the envelope's routing fields only, so no span or metric can carry a message's content
(a ciphertext, a share, a label, a weight)."""

from __future__ import annotations

from dataclasses import dataclass

from mpdp.wire.traffic import UNPARSEABLE, label_of


@dataclass(frozen=True)
class Call:
    service: str  # mpdp.proto.v1.Role
    method: str  # Step
    kind: str  # Step/dppp/votes: the method, then the body's oneof kinds
    session_id: str
    sender: str  # the logical roles the envelope names ("" if none)
    receiver: str
    request_bytes: int

    @property
    def protocol(self) -> str:
        """The protocol a Step or AwaitResult names (its first body kind), "" for the others."""
        parts = self.kind.split("/")
        return parts[1] if len(parts) > 1 else ""

    @property
    def span_name(self) -> str:
        return f"{self.service}/{self.method}"


# The last served request described and its Call: the span and metrics interceptors of one server call both
# ask, and reading the envelope twice (its kind, its size) would be paid twice. Only for served requests: each is
# freshly deserialized and never changed, so the same object is the same call (held by reference, so its id
# cannot be reused by another). A caller may change and resend its own request object, so client sides ask
# call_of.
_last_served: tuple = (None, None, None)


def served_call_of(full_method: str | bytes, request) -> Call:
    global _last_served
    last_method, last_request, last_call = _last_served
    if request is last_request and full_method == last_method:
        return last_call
    call = call_of(full_method, request)
    _last_served = (full_method, request, call)
    return call


def call_of(full_method: str | bytes, request) -> Call:
    text = full_method.decode() if isinstance(full_method, bytes) else full_method
    service, _, method = text.lstrip("/").rpartition("/")
    if request is UNPARSEABLE or request is None:
        return Call(service, method, method, "", "", "", 0)
    return Call(service, method, label_of(method, request), str(getattr(request, "session_id", "") or ""),
                str(getattr(request, "sender", "") or ""), str(getattr(request, "receiver", "") or ""),
                request.ByteSize())


def role_of(name: str) -> str:
    """`party/3` → `party`: metric labels carry roles, a bounded set, not ids or session ids."""
    return name.partition("/")[0] or "unknown"
