"""A party host's teacher models (DPPP's f_i, Hamm's h_i), trained when a protocol first predicts with one:
every hosted party's teacher at once, the scikit-learn ones in one child process that imports it once, and
none at all on a host that only runs Pathak or Du."""

from __future__ import annotations

import logging

import numpy as np

from mpdp.learning import models
from mpdp.sessions.on_first_use import OnFirstUse

log = logging.getLogger(__name__)


class HostTeachers:
    """The teachers of the logical parties one process hosts."""

    def __init__(self) -> None:
        self._parts: dict[int, tuple[str, np.ndarray, np.ndarray, int | None]] = {}
        self._models: OnFirstUse[dict] = OnFirstUse(self._train_all)

    def add(self, party: int, name: str, features: np.ndarray, labels: np.ndarray, classes: int | None) -> Teacher:
        if self._models.made:
            raise RuntimeError("teachers are added before the first is trained")
        self._parts[party] = (name, features, labels, classes)
        return Teacher(self, party)

    def model(self, party: int):
        return self._models.get()[party]

    def _train_all(self) -> dict:
        parties = sorted(self._parts)
        trained = models.train_portable_all([self._parts[number] for number in parties])
        log.info("trained %d teachers (%s) on first use", len(parties),
                 ", ".join(sorted({self._parts[number][0] for number in parties})))
        self._parts = {}  # the data stays in each party's resources; these references are not needed
        return dict(zip(parties, trained))


class Teacher:
    """One party's teacher as its resources hold it: trained (with its host's others) on the first prediction."""

    def __init__(self, host: HostTeachers, party: int):
        self._host = host
        self._party = party

    def predict(self, features: np.ndarray) -> np.ndarray:
        return self._host.model(self._party).predict(features)

    def __repr__(self) -> str:
        return f"Teacher(party {self._party}, {'trained' if self._host._models.made else 'not trained yet'})"
