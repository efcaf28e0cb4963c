"""Test-mode behaviours of a misbehaving party (a cheating voter, a tampering key holder, a crash after spending),
kept out of the product's sides: the product looks a behaviour up by name and never branches on it.

A behaviour is registered by a test-only module (tests/malicious_parties.py): the side classes it substitutes (a
product side → a subclass of it that misbehaves) and what it changes in the party's resources as they are made
(its ledger's disk full, a crash after spending). A party in test mode names one as its `fault` (`mpdp serve
--test-mode --fault NAME`). A name not registered yet is looked for in the module file MPDP_TEST_BEHAVIOURS names,
which only a test harness sets (tests/conftest.py); a role process it starts inherits it.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

ENVIRONMENT = "MPDP_TEST_BEHAVIOURS"

T = TypeVar("T")


@dataclass(frozen=True)
class Behaviour:
    name: str
    sides: Mapping[type, type] = field(default_factory=dict)  # a product side → the subclass that runs instead
    prepare: Callable[[Any], None] | None = None  # changes the party's resources as they are made


_REGISTERED: dict[str, Behaviour] = {}
_LOADED: set[str] = set()


def register(behaviour: Behaviour) -> Behaviour:
    """Called by a test-only module as it is imported."""
    _REGISTERED[behaviour.name] = behaviour
    return behaviour


def lookup(name: str) -> Behaviour:
    """The behaviour registered as `name`, loading the test harness's module first if it is not yet."""
    if name not in _REGISTERED:
        _load(os.environ.get(ENVIRONMENT, ""))
    if name not in _REGISTERED:
        raise ValueError(f"unknown fault {name!r}" + ("" if os.environ.get(ENVIRONMENT) else
                                                      f" (no test behaviours loaded: {ENVIRONMENT} is unset)"))
    return _REGISTERED[name]


def _load(path: str) -> None:
    if not path or path in _LOADED:
        return
    _LOADED.add(path)
    spec = importlib.util.spec_from_file_location(f"mpdp_test_behaviours_{len(_LOADED)}", Path(path))
    if spec is None or spec.loader is None:
        raise ValueError(f"{ENVIRONMENT}={path!r} is no Python module")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


def side_class(behaviour: Behaviour | None, product: type[T]) -> type[T]:
    """The class a party runs for `product`: the behaviour's subclass of it, or itself."""
    if behaviour is None:
        return product
    return behaviour.sides.get(product, product)
