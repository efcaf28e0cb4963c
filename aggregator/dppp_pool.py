"""The aggregator's side of an offline noise-pool fill (docs/malicious-party.md, "The noise pool"), free of gRPC.

OPEN --fill--> COLLECTING --every teacher's upload in, or the deadline--> DONE; any --abort--> ABORTED. Each teacher
is asked for `bits` more committed bits from its pool's next position; an upload enters the pool only once all its
bit proofs verify in one combination. A teacher whose upload fails, does not come, or cannot be asked is named in
the result and its pool is unchanged; the others' fills stand. The client learns each pool's level, nothing else.
"""

from __future__ import annotations

import enum
import time

from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.cryptocore.proofs.membership_proof import MembershipProofInvalid
from mpdp.proto.v1 import dppp_pb2, threshold_sum_pb2
from mpdp.sessions.errors import ProtocolError, denied, invalid, precondition
from mpdp.sessions.identity import CLIENT, Identity, party
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.side import RoleSide, handles
from mpdp.sessions.stages import StageTimer
from mpdp.vote_proofs import noise_bits, noise_pool
from mpdp.vote_proofs.noise_pool import Pools

DEFAULT_DEADLINE_S = 600.0
MAX_DEADLINE_S = 3600.0


class State(enum.Enum):
    OPEN = "open"
    COLLECTING = "collecting noise bits"
    DONE = "done"
    ABORTED = "aborted"


class DpppPoolAggregatorSide(RoleSide):
    State = State

    def __init__(self, session_id: str, request: dppp_pb2.DpppPoolFill, public_key: ThresholdPublicKey,
                 teachers: list[int], pools: Pools):
        check_key_id(public_key.key_id, request.key_id)  # cheap checks before any work
        if not 0 < request.bits <= noise_pool.MAX_FILL_BITS:
            raise invalid(f"a fill asks 1 to {noise_pool.MAX_FILL_BITS} bits per teacher, not {request.bits}")
        deadline = request.deadline_seconds or DEFAULT_DEADLINE_S
        if not 0 < deadline <= MAX_DEADLINE_S:
            raise invalid(f"deadline must be in (0, {MAX_DEADLINE_S}] seconds")
        full = [t for t in teachers if pools.of(t).room() < request.bits]
        if full:
            raise invalid(f"the pools of teachers {full} have no room for {request.bits} more bits "
                          f"(at most {pools.capacity} unspent per teacher)")
        super().__init__(session_id, State.OPEN)
        self.identity = Identity("aggregator", 0)
        self.public_key = public_key
        self.teachers = list(teachers)
        self.pools = pools
        self.bits = request.bits
        self.powers = (request.randomness_powers, request.mask_powers)  # relayed: the teachers check and keep them
        self.deadline_seconds = deadline
        self.asked: dict[int, int] = {}  # teacher → the first position it was asked for
        self.filled: set[int] = set()
        self.rejected: dict[int, str] = {}
        self.started = 0.0
        self.timer = StageTimer()
        self.released: dppp_pb2.DpppPoolFilled | None = None

    @property
    def participants(self) -> list[Identity]:
        return [party(t) for t in self.teachers]

    def may_abort(self, sender: Identity) -> bool:
        return sender == CLIENT  # a teacher that leaves is named in the result, not the end of the fill

    @handles("fill")
    def ask_teachers(self, sender: Identity, body: dppp_pb2.DpppPoolFill) -> list[Outbound]:
        if sender != CLIENT:
            raise denied(f"{sender} may not fill the noise pools")
        self._advance(State.OPEN, State.COLLECTING, "asking for noise bits")
        self.started = time.monotonic()
        outbound = []
        for teacher in self.teachers:
            self.asked[teacher] = self.pools.of(teacher).next
            request = dppp_pb2.DpppPoolRequest(key_id=self.public_key.key_id, first=self.asked[teacher], count=self.bits,
                                               randomness_powers=self.powers[0], mask_powers=self.powers[1],
                                               client_signature=body.client_signature)
            outbound.append(Outbound(party(teacher), "pool_request", request))
        return outbound

    @handles("pool_bits")
    def collect_bits(self, sender: Identity, body: dppp_pb2.DpppPoolBits) -> list[Outbound]:
        """A teacher's upload: its position first, then counts and lengths, then every bit proof at once."""
        if sender.role != "party" or sender.id not in self.asked:
            raise denied(f"{sender} was not asked for noise bits")
        self._require(State.COLLECTING, "noise bits")
        teacher = sender.id
        if teacher in self.filled or teacher in self.rejected:
            raise precondition(f"party {teacher} already answered this fill (replay)")
        if body.first != self.asked[teacher]:
            raise invalid(f"party {teacher} was asked for positions from {self.asked[teacher]}, not {body.first}")
        try:
            values = noise_bits.check(self.public_key, self.bits, body.bits,
                                      noise_pool.context(self.public_key.key_id, teacher, body.first))
            self.pools.of(teacher).append(body.first, values, proofs=list(body.bits.proofs))
        except MembershipProofInvalid as error:
            self.rejected[teacher] = f"noise bit proof failed: {error}"
        except ProtocolError as error:  # a wrong count, or a concurrent fill took these positions
            self.rejected[teacher] = str(error)
        else:
            self.filled.add(teacher)
        return self.poll()

    def poll(self) -> list[Outbound]:
        if self.state is State.COLLECTING and len(self.filled) + len(self.rejected) >= len(self.teachers):
            self._finish()
        return []

    def on_deadline(self) -> list[Outbound]:
        if self.state is State.COLLECTING:
            if time.monotonic() - self.started < self.deadline_seconds:
                return []
            for teacher in self.teachers:
                if teacher not in self.filled:
                    self.rejected.setdefault(teacher, "sent no noise bits by the deadline")
            self._finish()
            return []
        return super().on_deadline()

    def on_undeliverable(self, to: Identity, kind: str, reason: str) -> list[Outbound]:
        if kind == "pool_request" and self.state is State.COLLECTING:
            self.rejected.setdefault(to.id, reason[:200])
        return self.poll()

    def _finish(self) -> None:
        self.timer.lap("fill")
        levels = [dppp_pb2.DpppPoolLevel(teacher=t, available=self.pools.of(t).available, next=self.pools.of(t).next)
                  for t in self.teachers]
        self.released = dppp_pb2.DpppPoolFilled(
            levels=levels, timing=self.timer.to_proto(),
            rejected=[threshold_sum_pb2.RejectedShare(holder=t, reason=r) for t, r in sorted(self.rejected.items())])
        self._advance(State.COLLECTING, State.DONE, "reporting the pools")

    def result(self) -> tuple[str, object] | None:
        return ("pool_filled", self.released) if self.released is not None and self.state is State.DONE else None

    def _forget(self) -> None:
        self.released = None
