"""Seconds per stage of one side's session, for its published timing."""

from __future__ import annotations

import time

from mpdp.proto.v1 import common_pb2


class StageTimer:
    def __init__(self, **earlier: float):
        self.seconds: dict[str, float] = dict(earlier)  # stages measured before this side existed
        self._started = self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        """The time since the previous lap (or the start) is `stage`'s."""
        now = time.perf_counter()
        self.seconds[stage] = now - self._last
        self._last = now

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self._started

    def to_proto(self) -> list[common_pb2.StageTiming]:
        return [common_pb2.StageTiming(stage=stage, seconds=s) for stage, s in self.seconds.items()]
