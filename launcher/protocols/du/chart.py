"""Du's stages in `mpdp trace`'s sequence chart: every kind of `DuMessage` in the round step it carries."""

from __future__ import annotations

from mpdp.proto.v1.du_pb2 import DuMessage

MESSAGE = DuMessage
STAGES: dict[str, tuple[str, ...]] = {
    "setup": ("open",),
    "rounds: model, perturbed uploads": ("model", "upload"),
    "threshold decryption": ("decryption_request", "partial_decryptions"),
    "the result": ("result", "test_record"),
}
