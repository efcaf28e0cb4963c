"""The `keygen` protocol's registry entry at a key holder."""

from __future__ import annotations

from collections.abc import Callable

from mpdp.cryptocore.threshold import KeyShare
from mpdp.proto.v1 import keygen_pb2
from mpdp.protocols.keygen.holder_side import KeygenHolderSide
from mpdp.sessions.identity import Identity
from mpdp.sessions.protocol import RoleProtocol

NAME = "keygen"


def holder_protocol(committee: list[int], store: Callable[[Identity, KeyShare], None]) -> RoleProtocol:
    """A round may open the session: a holder opened earlier can be first to reach this one (holder_side).
    `store(me, share)` keeps holder me's share (a file next to its process, say) once the key is confirmed."""
    return RoleProtocol(NAME, keygen_pb2.KeygenMessage, frozenset({"open", "round"}),
                        lambda session_id, me, sender, kind, body: KeygenHolderSide(
                            session_id, me, committee, lambda share: store(me, share)),
                        (KeygenHolderSide,), frozenset({"open", "round"}))
