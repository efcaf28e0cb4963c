"""The `keygen` protocol's registry entry at a key holder."""

from __future__ import annotations

from collections.abc import Callable

from mpdp.cryptocore.paillier.threshold import KeyShare
from mpdp.proto.v1 import keygen_pb2
from mpdp.protocols.keygen.commit_side import KeygenCommitSide
from mpdp.protocols.keygen.holder_side import KeygenHolderSide
from mpdp.protocols.keygen.prepared import PreparedShares
from mpdp.sessions.errors import denied
from mpdp.sessions.identity import CLIENT, Identity
from mpdp.sessions.protocol import RoleProtocol

NAME = "keygen"


def holder_protocol(committee: list[int], store: Callable[[Identity, KeyShare], None],
                    discard: Callable[[Identity], None], prepared: PreparedShares | None = None) -> RoleProtocol:
    """A round may open the session: a holder opened earlier can be first to reach this one (holder_side).
    A commit opens its own session (commit_side). `store(me, share)` writes holder me's share (a file next to its
    process, say) when the client commits it; `discard(me)` removes it again when the client rolls it back."""
    shares = prepared if prepared is not None else PreparedShares()

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body):
        # Who may send the opening kind, before a side exists: a refused opener leaves no session behind that
        # the client's own opening or commit would then meet.
        if kind in ("open", "commit") and sender != CLIENT:
            raise denied(f"{sender} may not {kind} a key generation")
        if kind == "round" and (sender.role != "party" or sender.id not in committee or sender == me):
            raise denied(f"{sender} is not another key holder of this committee")
        if kind == "commit":
            return KeygenCommitSide(session_id, me, shares, lambda share: store(me, share), lambda: discard(me))
        return KeygenHolderSide(session_id, me, committee, shares)

    return RoleProtocol(NAME, keygen_pb2.KeygenMessage, frozenset({"open", "round", "commit"}), open_side,
                        (KeygenHolderSide, KeygenCommitSide), frozenset({"open", "round", "commit"}))
