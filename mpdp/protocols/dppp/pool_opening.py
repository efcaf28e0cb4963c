"""What the client signs to start an offline noise-pool fill (docs/malicious-party.md, "The noise pool").

A fill spends no privacy budget, but it makes every teacher draw and prove bits and precompute exponentiations:
work that only the client may order, as it orders every session (mpdp/sessions/opening.py). The client signs
the fill's parameters under the protocol name "dppp-pool" and the session id; the aggregator forwards the
signature with each teacher's request, and a teacher checks it against the request it received before it makes
anything. The aggregator's own choice, the pool position each teacher starts at, is not signed: it only says
where in the teacher's pool the bits go, and the teacher checks it against its own pool."""

from __future__ import annotations

from dataclasses import dataclass

from mpdp.proto.v1 import dppp_pb2

PROTOCOL = "dppp-pool"


@dataclass(frozen=True)
class PoolFill:
    """The signed part of a fill: the key, the bits per teacher and the precomputed pairs per teacher."""

    key_id: bytes
    bits: int
    randomness_powers: int
    mask_powers: int

    def to_proto(self) -> dppp_pb2.DpppPoolFill:
        """The bytes the signature covers: DpppPoolFill without its deadline and signature."""
        return dppp_pb2.DpppPoolFill(key_id=self.key_id, bits=self.bits, randomness_powers=self.randomness_powers,
                                     mask_powers=self.mask_powers)

    @classmethod
    def from_proto(cls, message: dppp_pb2.DpppPoolFill) -> PoolFill:
        return cls(bytes(message.key_id), message.bits, message.randomness_powers, message.mask_powers)

    @classmethod
    def of_request(cls, message: dppp_pb2.DpppPoolRequest) -> PoolFill:
        """The fill as a teacher's request states it (its count is the fill's bits per teacher)."""
        return cls(bytes(message.key_id), message.count, message.randomness_powers, message.mask_powers)
