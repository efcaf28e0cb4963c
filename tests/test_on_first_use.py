"""Start-up costs only for what runs: resources made on a protocol's first use, once per process."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from mpdp.learning import models
from mpdp.sessions.errors import ProtocolError
from mpdp.sessions.matrices import matrix_to_proto, shared_matrix_from_proto
from mpdp.sessions.on_first_use import OnFirstUse
from party.teachers import HostTeachers


def test_made_once_by_concurrent_first_users():
    calls = []
    barrier = threading.Barrier(8)

    def make():
        calls.append(1)
        return object()

    resource = OnFirstUse(make)
    assert not resource.made
    got = []

    def use():
        barrier.wait()
        got.append(resource.get())

    threads = [threading.Thread(target=use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and resource.made and all(value is got[0] for value in got)


def test_a_failed_make_is_retried():
    attempts = []

    def make():
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("not yet")
        return 7

    resource = OnFirstUse(make)
    with pytest.raises(OSError):
        resource.get()
    assert not resource.made and resource.get() == 7 and len(attempts) == 2


def test_teachers_train_together_on_the_first_prediction(monkeypatch):
    batches = []
    real = models.train_portable_all

    def counted(jobs):
        batches.append(len(jobs))
        return real(jobs)

    monkeypatch.setattr(models, "train_portable_all", counted)
    rng = np.random.default_rng(3)
    host = HostTeachers()
    parts = {}
    for number in (4, 5, 6):
        x = rng.uniform(-0.5, 0.5, size=(40, 3))
        y = (x[:, 0] > 0).astype(int)
        parts[number] = host.add(number, "logistic-exact", x, y, 2), x, y
    assert batches == []  # nothing trained at start-up
    for teacher, x, y in parts.values():
        assert np.mean(teacher.predict(x) == y) > 0.8  # each party's own model
    assert batches == [3]  # one batch for the whole host
    with pytest.raises(RuntimeError):
        host.add(7, "logistic-exact", x, y, 2)


def test_one_decoded_copy_per_process():
    x = np.arange(12, dtype=float).reshape(4, 3)
    first = shared_matrix_from_proto(matrix_to_proto(x))
    second = shared_matrix_from_proto(matrix_to_proto(x))
    assert first is second and not first.flags.writeable
    assert np.array_equal(first, x)
    other = shared_matrix_from_proto(matrix_to_proto(x + 1))
    assert other is not first and np.array_equal(other, x + 1)
    bad = matrix_to_proto(x)
    bad.rows = 5
    with pytest.raises(ProtocolError):
        shared_matrix_from_proto(bad)
    nonfinite = matrix_to_proto(np.array([[np.inf, 0.0]]))
    with pytest.raises(ProtocolError):
        shared_matrix_from_proto(nonfinite)
