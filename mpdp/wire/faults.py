"""Test-mode fault injection, for the hardening suite's fault matrix; protocol-agnostic.

A fault is `kill-on:LABEL` or `stop-on:LABEL` (the server sends itself SIGKILL / SIGSTOP when it receives
a call with that traffic label, e.g. `Step/pathak/masked_share` or `Step/dppp/queries`), or `drop:LABEL` /
`delay:LABEL:SECONDS` (the client side loses that outgoing message, or sends it late). Labels are the
traffic report's: the method, then the kind of each nested `body` oneof.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from dataclasses import dataclass

import grpc

from mpdp.wire.traffic import label_of

log = logging.getLogger(__name__)
KINDS = ("kill-on", "stop-on", "drop", "delay")


@dataclass(frozen=True)
class Fault:
    kind: str
    label: str
    seconds: float = 0.0

    @classmethod
    def parse(cls, text: str) -> "Fault | None":
        """A generic fault, or None for another kind of fault string."""
        kind, _, rest = text.partition(":")
        if kind not in KINDS or not rest:
            return None
        if kind == "delay":
            label, _, seconds = rest.rpartition(":")
            return cls(kind, label, float(seconds))
        return cls(kind, rest)


class ServerFaultInterceptor(grpc.aio.ServerInterceptor):
    """Kills or stops this process when a call with the fault's label arrives."""

    def __init__(self, fault: Fault):
        self._fault = fault

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        method = handler_call_details.method.rsplit("/", 1)[-1]
        inner, fault = handler.unary_unary, self._fault

        async def faulty(request, context):
            if label_of(method, request) == fault.label:
                log.warning("fault injection: %s on %s", fault.kind, fault.label)
                os.kill(os.getpid(), signal.SIGKILL if fault.kind == "kill-on" else signal.SIGSTOP)
            return await inner(request, context)

        return grpc.unary_unary_rpc_method_handler(faulty, request_deserializer=handler.request_deserializer,
                                                   response_serializer=handler.response_serializer)


class ClientFaultInterceptor(grpc.aio.UnaryUnaryClientInterceptor):
    """Loses (reports success without sending) or delays outgoing calls with the fault's label."""

    def __init__(self, fault: Fault):
        self._fault = fault

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        method = client_call_details.method
        method = (method.decode() if isinstance(method, bytes) else method).rsplit("/", 1)[-1]
        if label_of(method, request) == self._fault.label:
            if self._fault.kind == "drop":
                log.warning("fault injection: dropped %s", self._fault.label)
                return _dropped()
            await asyncio.sleep(self._fault.seconds)
        return await continuation(client_call_details, request)


async def _dropped() -> None:
    """What a dropped call looks like to its sender: it went out, and the answer was empty."""
    return None
