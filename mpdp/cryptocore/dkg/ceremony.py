"""The ceremony inside one process: every holder's state machine, messages routed in memory.

For tests and measurement (and as the reference for a transport): `intercept` sees every
message before delivery and may change it or drop it (return None), which is how the tests
play a cheating or vanishing holder. Per-holder figures (messages, bytes, CPU time) are
counted as a transport would count them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mpdp.cryptocore.dkg.holder import Holder
from mpdp.cryptocore.dkg.messages import BROADCAST, Message
from mpdp.cryptocore.paillier.threshold import KeyShare, ThresholdPublicKey

Intercept = Callable[[Message], "Message | None"]


@dataclass
class HolderFigures:
    messages_sent: int = 0
    bytes_sent: int = 0  # a broadcast counts once per recipient, as point-to-point channels carry it
    cpu_seconds: float = 0.0


@dataclass
class CeremonyFigures:
    rounds: int = 0
    critical_path_seconds: float = 0.0  # Σ over rounds of the slowest holder's CPU time: the wall time on ℓ machines
    attempts: int = 0
    candidates_tried: int = 0
    biprimality_tests: int = 0
    holders: dict[int, HolderFigures] = field(default_factory=dict)
    stage_seconds: dict[str, float] = field(default_factory=dict)  # critical path by the stage whose messages were taken


class InProcess:
    """All ℓ holders and the messages in flight; `run` advances them round by round."""

    def __init__(self, bits: int, holders: int, threshold: int, batch: int | None = None,
                 sieve_bound: int | None = None):
        self.holders = [Holder(index, holders, threshold, bits, batch, sieve_bound) for index in range(1, holders + 1)]
        self.figures = CeremonyFigures(holders={h.index: HolderFigures() for h in self.holders})
        self.intercept: Intercept | None = None
        self._outgoing = {h.index: self._step(h, h.start) for h in self.holders}

    def _step(self, holder: Holder, action) -> list[Message]:
        started = time.process_time()
        try:
            return action()
        finally:
            self.figures.holders[holder.index].cpu_seconds += time.process_time() - started

    @property
    def stage(self) -> str | None:
        """The stage whose messages are in flight (None when done)."""
        return self.holders[0].stage

    def _deliver(self) -> dict[int, list[Message]]:
        inboxes: dict[int, list[Message]] = {h.index: [] for h in self.holders}
        for sender, sent in self._outgoing.items():
            for message in sent:
                delivered = self.intercept(message) if self.intercept else message
                if delivered is None:
                    continue
                recipients = [h for h in inboxes if h != sender] if message.recipient == BROADCAST else [message.recipient]
                counts = self.figures.holders[sender]
                counts.messages_sent += len(recipients)
                counts.bytes_sent += delivered.size * len(recipients)
                for recipient in recipients:
                    inboxes[recipient].append(delivered)
        return inboxes

    def run(self, until: str | None = None) -> None:
        """Rounds until every holder is done, or until the messages of stage `until` are in flight."""
        while any(h.result is None for h in self.holders) and (until is None or self.stage != until):
            self.figures.rounds += 1
            stage = self.stage
            inboxes = self._deliver()
            before = {h.index: self.figures.holders[h.index].cpu_seconds for h in self.holders}
            self._outgoing = {h.index: self._step(h, lambda h=h: h.receive(inboxes[h.index])) for h in self.holders}
            slowest = max(self.figures.holders[h.index].cpu_seconds - before[h.index] for h in self.holders)
            self.figures.critical_path_seconds += slowest
            if stage is not None:
                self.figures.stage_seconds[stage] = self.figures.stage_seconds.get(stage, 0.0) + slowest
        first = self.holders[0]
        self.figures.attempts = first.attempt
        self.figures.candidates_tried = first.candidates_tried
        self.figures.biprimality_tests = first.biprimality_tests

    def result(self) -> tuple[ThresholdPublicKey, list[KeyShare]]:
        shares = [h.result for h in self.holders]
        if any(share is None for share in shares):
            raise RuntimeError("the ceremony has not finished")
        return shares[0].public, shares  # type: ignore[union-attr,return-value]


def run_in_process(bits: int, holders: int, threshold: int, batch: int | None = None,
                   intercept: Intercept | None = None, sieve_bound: int | None = None,
                   ) -> tuple[ThresholdPublicKey, list[KeyShare], CeremonyFigures]:
    """Run every holder to the end; raises DkgAborted (from the first holder that aborts) otherwise."""
    ceremony = InProcess(bits, holders, threshold, batch, sieve_bound)
    ceremony.intercept = intercept
    ceremony.run()
    public, shares = ceremony.result()
    return public, shares, ceremony.figures
