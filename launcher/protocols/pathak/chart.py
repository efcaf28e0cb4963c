"""Pathak's stages in `mpdp trace`'s sequence chart: every kind of `PathakMessage` in the stage of the protocol
it carries (Pathak–Rane–Raj 2010, Section 4)."""

from __future__ import annotations

from mpdp.proto.v1.pathak_pb2 import PathakMessage

MESSAGE = PathakMessage
STAGES: dict[str, tuple[str, ...]] = {
    "setup": ("open", "start"),
    "keys and π1 (commit–reveal)": ("curator_key", "party_key", "party_public_key", "commitment", "reveal"),
    "Stage 1: blind, permute, compare": ("routed_share", "barrier_ready", "barrier_release", "stage1_element",
                                         "masked_share", "masked_value", "ready_to_compare", "compare_request",
                                         "compare_reply"),
    "Stage 2: indicator selects the noise": ("indicator", "indicator_element", "selected_noise"),
    "Stage 3: masked noise, additive shares": ("masked_noise", "share"),
    "the result": ("published", "test_record"),
}
