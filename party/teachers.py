"""A party host's teacher models (DPPP's f_i, Hamm's h_i), trained when a protocol first predicts with one:
every hosted party's teacher at once, the scikit-learn ones in one child process that imports it once, and
none at all on a host that only runs Pathak or Du. A DPPP ensemble of T models per party (mpdp/learning/
ensemble.py) is trained the same way on its first use with that T, and kept for the process's life."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

import numpy as np

from mpdp.learning import ensemble, models
from mpdp.sessions.errors import invalid
from mpdp.sessions.on_first_use import OnFirstUse

log = logging.getLogger(__name__)

KEPT_ENSEMBLES = 4  # distinct T kept trained per host: a client alternating sizes retrains, memory stays bounded


class HostTeachers:
    """The teachers of the logical parties one process hosts."""

    def __init__(self) -> None:
        # References to each party's arrays, which its resources hold anyway: no copy.
        self._parts: dict[int, tuple[str, np.ndarray, np.ndarray, int | None]] = {}
        self._models: OnFirstUse[dict] = OnFirstUse(self._train_all)
        self._ensembles: OrderedDict[int, OnFirstUse[dict]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, party: int, name: str, features: np.ndarray, labels: np.ndarray, classes: int | None) -> Teacher:
        if self._models.made:
            raise RuntimeError("teachers are added before the first is trained")
        self._parts[party] = (name, features, labels, classes)
        return Teacher(self, party)

    def model(self, party: int):
        return self._models.get()[party]

    def ensemble(self, party: int, size: int) -> list:
        """The party's T models; T = 1 is its one teacher on all its rows."""
        if size == 1:
            return [self.model(party)]
        rows = len(self._parts[party][2])
        if size > rows:  # before any training
            raise invalid(f"an ensemble of {size} models needs at least {size} rows; party {party} holds {rows}")
        with self._lock:
            made = self._ensembles.get(size)
            if made is None:
                made = self._ensembles[size] = OnFirstUse(lambda: self._train_ensembles(size))
                while len(self._ensembles) > KEPT_ENSEMBLES:
                    self._ensembles.popitem(last=False)
            self._ensembles.move_to_end(size)
        return made.get()[party]

    def _train_all(self) -> dict:
        parties = sorted(self._parts)
        trained = models.train_portable_all([self._parts[number] for number in parties])
        log.info("trained %d teachers (%s) on first use", len(parties),
                 ", ".join(sorted({self._parts[number][0] for number in parties})))
        return dict(zip(parties, trained))

    def _train_ensembles(self, size: int) -> dict:
        """Every hosted party's T models that it can split (a party with fewer than T rows has none)."""
        parties = [number for number in sorted(self._parts) if len(self._parts[number][2]) >= size]
        jobs = [job for number in parties for job in ensemble.jobs(*self._parts[number], size)]
        trained = models.train_portable_all(jobs)
        log.info("trained %d ensembles of %d models (%s) on first use", len(parties), size,
                 ", ".join(sorted({self._parts[number][0] for number in parties})))
        return {number: trained[index * size:(index + 1) * size] for index, number in enumerate(parties)}


class Teacher:
    """One party's teacher as its resources hold it: trained (with its host's others) on the first prediction."""

    def __init__(self, host: HostTeachers, party: int):
        self._host = host
        self._party = party

    def predict(self, features: np.ndarray) -> np.ndarray:
        return self._host.model(self._party).predict(features)

    def ensemble(self, size: int) -> list:
        """The T models of the party's ensemble ballot, each on one of T disjoint parts of its rows."""
        return self._host.ensemble(self._party, size)

    def __repr__(self) -> str:
        return f"Teacher(party {self._party}, {'trained' if self._host._models.made else 'not trained yet'})"


def ensemble_of(model, size: int) -> list:
    """A party's T models: its Teacher's ensemble, or (in-process twins holding a fitted model) that model
    alone when T = 1."""
    if hasattr(model, "ensemble"):
        return model.ensemble(size)
    if size != 1:
        raise invalid(f"party holds one fitted model and no rows to split into an ensemble of {size}")
    return [model]
