"""A teacher's side of an offline noise-pool fill (docs/malicious-party.md, "The noise pool"), free of gRPC.

OPEN --pool_request--> DONE: `count` fresh bits from `secrets`, each encrypted (0 or 1) with a bit proof bound to
the key, the teacher and its pool position, kept in the teacher's pool and sent to the aggregator, which verifies
them before they enter its own; and the pairs (x, h_s^x) its future vote proofs will use, kept and never sent.
Nothing derives from the teacher's data: no privacy budget is asked or spent."""

from __future__ import annotations

import enum
import secrets

import numpy as np

from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.proofs.precomputed_powers import PowerPool
from mpdp.proto.v1 import common_pb2, dppp_pb2
from mpdp.sessions.errors import invalid
from mpdp.sessions.identity import AGGREGATOR, Identity
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.side import RoleSide, handles
from mpdp.vote_proofs import noise_bits, noise_pool
from mpdp.vote_proofs.noise_pool import NoisePool
from party.resources import PartyResources

DEADLINE_S = 3600.0  # the side ends as it answers; this only bounds a request that never gets its turn


class State(enum.Enum):
    OPEN = "open"
    DONE = "done"
    ABORTED = "aborted"


class DpppPoolTeacherSide(RoleSide):
    State = State
    announce_abort = False  # a teacher that cannot fill is left out of the fill, nothing more
    deadline_seconds = DEADLINE_S

    def __init__(self, session_id: str, own: PartyResources, pool: NoisePool, powers: PowerPool,
                 request: dppp_pb2.DpppPoolRequest):
        check_key_id(own.public_key.key_id, request.key_id)  # cheap checks before the side exists
        if not 0 < request.count <= noise_pool.MAX_FILL_BITS:
            raise invalid(f"a fill makes 1 to {noise_pool.MAX_FILL_BITS} bits per teacher, not {request.count}")
        rooms = powers.room()
        if request.randomness_powers > rooms[0] or request.mask_powers > rooms[1]:
            raise invalid(f"teacher {own.id} has room for {rooms[0]} and {rooms[1]} more precomputed pairs")
        pool.restart_at(request.first)  # what the aggregator does not hold from `first` on is void
        if request.count > pool.room():
            raise invalid(f"teacher {own.id}'s pool has room for {pool.room()} more bits, not {request.count}")
        super().__init__(session_id, State.OPEN)
        self.identity = Identity("party", own.id)
        self.own = own
        self.pool = pool
        self.powers = powers

    @property
    def participants(self) -> list[Identity]:
        return [AGGREGATOR]

    def _fresh_bits(self, count: int) -> np.ndarray:
        """`count` bits from `secrets`."""
        stream = np.frombuffer(secrets.token_bytes((count + 7) // 8), dtype=np.uint8)
        return np.unpackbits(stream)[:count].astype(np.int64)

    def _commit_bits(self, bits: np.ndarray, first: int) -> tuple[common_pb2.ProvenVotes, list[int]]:
        """The bits encrypted at the pool's positions from `first`, each with its bit proof."""
        public_key = self.own.public_key
        return noise_bits.commit(public_key, bits, noise_pool.context(public_key.key_id, self.own.id, first))

    @handles("pool_request")
    def fill(self, sender: Identity, body: dppp_pb2.DpppPoolRequest) -> list[Outbound]:
        if sender != AGGREGATOR:
            raise invalid(f"{sender} may not ask for noise bits; the aggregator does")
        self._require(State.OPEN, "filling the noise pool")
        bits = self._fresh_bits(body.count)
        committed, values = self._commit_bits(bits, body.first)
        self.pool.append(body.first, values, bits.tolist())
        self.powers.fill(min(body.randomness_powers, self.powers.room()[0]), min(body.mask_powers, self.powers.room()[1]))
        self._advance(State.OPEN, State.DONE, "uploading noise bits")
        return [Outbound(AGGREGATOR, "pool_bits", dppp_pb2.DpppPoolBits(first=body.first, bits=committed))]
