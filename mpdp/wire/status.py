"""Translate protocol and crypto errors into gRPC statuses at the servicer boundary."""

from __future__ import annotations

import functools
import logging

import grpc

from mpdp.sessions.errors import Kind, refusal

log = logging.getLogger(__name__)

CODES = {
    Kind.INVALID_ARGUMENT: grpc.StatusCode.INVALID_ARGUMENT,
    Kind.FAILED_PRECONDITION: grpc.StatusCode.FAILED_PRECONDITION,
    Kind.PERMISSION_DENIED: grpc.StatusCode.PERMISSION_DENIED,
    Kind.ABORTED: grpc.StatusCode.ABORTED,
    Kind.UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
    Kind.RESOURCE_EXHAUSTED: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Kind.DEADLINE_EXCEEDED: grpc.StatusCode.DEADLINE_EXCEEDED,
}


def translate_errors(method):
    """Servicer method decorator: a refusal (mpdp/sessions/errors.py) becomes a clear status; anything else is a bug
    and propagates as one."""

    @functools.wraps(method)
    async def wrapper(self, request, context):
        try:
            return await method(self, request, context)
        except Exception as error:
            problem = refusal(error)
            if problem is None:
                raise
        log.info("%s refused: %s (%s)", method.__name__, problem, problem.kind.name)
        await context.abort(CODES[problem.kind], str(problem))

    return wrapper
