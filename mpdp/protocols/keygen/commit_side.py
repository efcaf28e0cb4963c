"""A key holder's side of the commit (docs/distributed-keygen.md, "Commit", step 3): its own session,
opened by the client alone once every holder reported the same digest, naming the key generation
session whose prepared share to write.

OPEN --commit (client; the digest this holder acknowledged)--> DONE: the share is written (`store`).
The client may abort a DONE commit (a holder elsewhere refused its commit): `discard` then removes
the written share, so the holders end alike. A refused commit changes nothing.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from mpdp.cryptocore.dkg.transcript import DIGEST_BYTES
from mpdp.cryptocore.paillier.threshold import KeyShare
from mpdp.proto.v1 import keygen_pb2
from mpdp.protocols.keygen.prepared import PreparedShares
from mpdp.sessions.errors import ProtocolError, denied, invalid
from mpdp.sessions.identity import CLIENT, Identity
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.side import RoleSide, handles

MAX_SESSION_ID = 128  # a session id's length at most (the registry's); the commit names one


class State(enum.Enum):
    OPEN = "open"
    DONE = "done"
    ABORTED = "aborted"


class KeygenCommitSide(RoleSide):
    State = State

    def __init__(self, session_id: str, me: Identity, prepared: PreparedShares, store: Callable[[KeyShare], None],
                 discard: Callable[[], None]):
        super().__init__(session_id, State.OPEN)
        self.identity, self.prepared, self.store, self.discard = me, prepared, store, discard
        self._committed: keygen_pb2.KeygenCommitted | None = None

    @property
    def participants(self) -> list[Identity]:
        return []  # the client's decision, told to each holder: nobody else to tell

    @handles("commit")
    def commit(self, sender: Identity, body) -> list[Outbound]:
        if sender != CLIENT:
            raise denied(f"{sender} may not commit a key generation")
        if not body.ceremony or len(body.ceremony) > MAX_SESSION_ID or len(body.digest) != DIGEST_BYTES:
            raise invalid(f"a commit names a key generation session and its {DIGEST_BYTES}-byte digest")
        self._require(State.OPEN, "commit")
        share = self.prepared.take(self.identity, body.ceremony, body.digest)  # refused: nothing changed
        try:
            self.store(share)
        except (OSError, ValueError) as error:  # no share file in this holder's topology, a full disk
            self.fail(f"{self.identity} could not write its share: {error}")
        self._committed = keygen_pb2.KeygenCommitted(digest=body.digest)
        try:
            self._advance(State.OPEN, State.DONE, "commit")
        except ProtocolError:  # the client aborted meanwhile: what was written goes
            self._committed = None
            self.discard()
            raise
        return []

    def _forget(self) -> None:
        if self._committed is not None:  # the client rolls back a written share
            self._committed = None
            self.discard()

    def result(self):
        return ("committed", self._committed) if self._committed is not None and self.state is State.DONE else None
