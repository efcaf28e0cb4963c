"""Hamm's stages in `mpdp trace`'s sequence chart: every kind of `HammMessage` in the step of the protocol it
carries (protos/mpdp/proto/v1/hamm.proto numbers the steps)."""

from __future__ import annotations

from mpdp.proto.v1.hamm_pb2 import HammMessage

MESSAGE = HammMessage
STAGES: dict[str, tuple[str, ...]] = {
    "setup": ("open",),
    "votes on X_aux": ("queries", "votes", "aggregate"),
    "steps 2b–2d: verifiable noise (joint coins)": ("coin", "reveal", "shares", "flipped"),
    "threshold decryption": ("decryption_request", "partial_decryptions", "holder_unreachable"),
    "the result": ("result", "test_record"),
}
