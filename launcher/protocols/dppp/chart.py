"""DPPP's stages in `mpdp trace`'s sequence chart: every kind of `DpppMessage` in the step of the protocol it
carries (protos/mpdp/proto/v1/dppp.proto numbers the steps)."""

from __future__ import annotations

from mpdp.proto.v1.dppp_pb2 import DpppMessage

MESSAGE = DpppMessage
STAGES: dict[str, tuple[str, ...]] = {
    "setup": ("open",),
    "offline: the noise pool": ("fill", "pool_request", "pool_bits", "pool_filled"),
    "step 2: noisy encrypted votes": ("queries", "votes"),
    "steps 2b–2d: verifiable noise (joint coins)": ("coin", "reveal", "shares", "flipped"),
    "steps 4–5: threshold decryption": ("decryption_request", "partial_decryptions", "stand_down"),
    "the result": ("result", "test_record"),
}
