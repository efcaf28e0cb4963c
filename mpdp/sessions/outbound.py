"""What a role's side of a session hands the host to send."""

from __future__ import annotations

from dataclasses import dataclass

from mpdp.sessions.identity import Identity


@dataclass(frozen=True)
class Outbound:
    """One message for `to`: `kind` is the body field of the protocol's message type, `body` its value."""

    to: Identity
    kind: str
    body: object
