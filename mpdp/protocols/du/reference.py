"""The in-process reference of a Du run: the rounds every networked run must reproduce from the same
random streams (and, with secure aggregation, to within 2^−20)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mpdp.protocols.du import local, server
from mpdp.protocols.du.parameters import DuParameters


@dataclass
class History:
    models: list[np.ndarray] = field(default_factory=list)  # θ_0 = 0, θ_1, … (the server's averages)
    participants: list[list[int]] = field(default_factory=list)  # who uploaded in each round
    stopped: str = ""

    @property
    def final(self) -> np.ndarray:
        return self.models[-1]

    def released(self, parameters: DuParameters) -> np.ndarray:
        """What the server releases (server.released): the mean of the rounds' models with a noisy method."""
        return server.released(parameters, self.models[1:])

    @property
    def rounds(self) -> int:
        return len(self.models) - 1


def run(parameters: DuParameters, parts: list[tuple[np.ndarray, np.ndarray]], noise_seed: int,
        dropped_after: dict[int, int] | None = None) -> History:
    """Rounds over the parties' (x̃, y) (parties numbered from 1); `dropped_after[i] = k`: party i uploads
    in rounds < k only."""
    history = History(models=[np.zeros(parameters.weights)])
    dropped_after = dropped_after or {}
    for round_number in range(parameters.rounds):
        theta = history.final
        uploads = {}
        for number, (features, labels) in enumerate(parts, start=1):
            if round_number >= dropped_after.get(number, parameters.rounds + 1):
                continue
            source = local.noise_source(noise_seed, number, round_number)
            uploads[number] = (len(labels), local.local_update(parameters, features, labels, theta, source))
        history.participants.append(sorted(uploads))
        history.models.append(server.weighted_average(uploads))
        if server.converged(theta, history.final, parameters.tolerance):
            history.stopped = f"converged after {round_number + 1} rounds"
            return history
    history.stopped = f"round limit {parameters.rounds}"
    return history


def predict(theta: np.ndarray, features: np.ndarray) -> np.ndarray:
    """1 where θᵀx̃ > 0 (p(y = 1 | x) > ½), on raw features (augmented here)."""
    from mpdp.protocols.du.objectives import augment

    return (augment(features) @ theta > 0).astype(int)
