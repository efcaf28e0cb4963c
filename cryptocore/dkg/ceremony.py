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

from cryptocore.dkg.holder import Holder
from cryptocore.dkg.messages import BROADCAST, Message
from cryptocore.threshold import KeyShare, ThresholdPublicKey


@dataclass
class HolderFigures:
    messages_sent: int = 0
    bytes_sent: int = 0  # a broadcast counts once per recipient, as point-to-point channels carry it
    cpu_seconds: float = 0.0


@dataclass
class CeremonyFigures:
    rounds: int = 0
    attempts: int = 0
    candidates_tried: int = 0
    biprimality_tests: int = 0
    holders: dict[int, HolderFigures] = field(default_factory=dict)


def run_in_process(bits: int, holders: int, threshold: int, batch: int | None = None,
                   intercept: Callable[[Message], Message | None] | None = None,
                   ) -> tuple[ThresholdPublicKey, list[KeyShare], CeremonyFigures]:
    """Run every holder to the end; raises DkgAborted (from the first holder that aborts) otherwise."""
    parties = [Holder(index, holders, threshold, bits, batch) for index in range(1, holders + 1)]
    figures = CeremonyFigures(holders={h.index: HolderFigures() for h in parties})

    def step(holder: Holder, action) -> list[Message]:
        started = time.process_time()
        try:
            return action()
        finally:
            figures.holders[holder.index].cpu_seconds += time.process_time() - started

    outgoing = {h.index: step(h, h.start) for h in parties}
    while any(h.result is None for h in parties):
        figures.rounds += 1
        inboxes: dict[int, list[Message]] = {h.index: [] for h in parties}
        for sender, sent in outgoing.items():
            for message in sent:
                delivered = intercept(message) if intercept else message
                if delivered is None:
                    continue
                recipients = [h for h in inboxes if h != sender] if message.recipient == BROADCAST else [message.recipient]
                counts = figures.holders[sender]
                counts.messages_sent += len(recipients)
                counts.bytes_sent += delivered.size * len(recipients)
                for recipient in recipients:
                    inboxes[recipient].append(delivered)
        outgoing = {h.index: step(h, lambda h=h: h.receive(inboxes[h.index])) for h in parties}
    first = parties[0]
    figures.attempts = first.attempt
    figures.candidates_tried = first.candidates_tried
    figures.biprimality_tests = first.biprimality_tests
    shares = [h.result for h in parties if h.result is not None]
    return shares[0].public, shares, figures
