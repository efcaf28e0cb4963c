"""Misbehaving parties live in tests/malicious_parties.py: the product's sides never branch on a fault, every
behaviour is a subclass of the side it replaces, and a name nothing registered is refused."""

import re
from pathlib import Path

import numpy as np
import pytest

from party import behaviours
from party.dppp import DpppTeacherSide
from party.resources import PartyResources
from tests import malicious_parties

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("party", "aggregator", "curator", "mpdp")  # the sides and what they use; the launcher's process faults
# (kill-on, stop-on, SIGKILL, SIGSTOP) are the hardening suite's, not a party's behaviour


def test_no_product_module_branches_on_a_fault_name():
    named = re.compile(r"(?<!for )\bfault\s*(==|!=|in\b)")
    found = [f"{path.relative_to(ROOT)}:{number}" for folder in PRODUCT for path in sorted((ROOT / folder).rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1) if named.search(line)]
    assert found == []


def test_every_behaviour_replaces_a_side_with_a_subclass_of_it():
    assert len(malicious_parties.BEHAVIOURS) == 14
    for behaviour in malicious_parties.BEHAVIOURS:
        assert behaviours.lookup(behaviour.name).name == behaviour.name
        assert behaviour.sides or behaviour.prepare is not None
        for product, replacement in behaviour.sides.items():
            assert issubclass(replacement, product) and replacement is not product


def _party(**changes) -> PartyResources:
    return PartyResources(1, None, None, None, np.zeros((1, 1)), np.zeros(1), **changes)  # type: ignore[arg-type]


def test_a_party_runs_its_behaviours_side_and_otherwise_the_products():
    assert _party(test_mode=True).side(DpppTeacherSide) is DpppTeacherSide
    skewed = _party(test_mode=True, fault="noise-skew").side(DpppTeacherSide)
    assert skewed is not DpppTeacherSide and issubclass(skewed, DpppTeacherSide)


def test_a_fault_needs_test_mode_and_a_registered_name():
    with pytest.raises(ValueError, match="test mode"):
        _party(fault="noise-skew")
    with pytest.raises(ValueError, match="unknown fault 'no-such-behaviour'"):
        _party(test_mode=True, fault="no-such-behaviour")
