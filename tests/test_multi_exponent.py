"""Straus' simultaneous multi-exponentiation against the product of separate powmods."""

import gmpy2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cryptocore.multi_exponent import multi_powmod

MODULI = st.integers(min_value=2, max_value=2**600)
TERMS = st.lists(st.tuples(st.integers(min_value=0, max_value=2**700), st.integers(min_value=0, max_value=2**200)),
                 max_size=12)


def _separately(bases, exponents, modulus):
    product = gmpy2.mpz(1) % modulus
    for base, exponent in zip(bases, exponents):
        product = product * gmpy2.powmod(base, exponent, modulus) % modulus
    return product


@given(TERMS, MODULI, st.integers(min_value=1, max_value=6))
def test_equals_the_product_of_separate_powers(terms, modulus, window):
    bases, exponents = [b for b, _ in terms], [e for _, e in terms]
    assert multi_powmod(bases, exponents, modulus, window) == _separately(bases, exponents, modulus)


def test_edges():
    assert multi_powmod([], [], 35) == 1
    assert multi_powmod([5, 7], [0, 0], 35) == 1
    assert multi_powmod([5], [3], 1) == 0
    assert multi_powmod([0, 3], [2, 1], 35) == 0
    assert multi_powmod([34], [2**128 + 1], 35) == 34  # (−1)^odd, an exponent just past a window's boundary


def test_refuses_what_it_cannot_compute():
    with pytest.raises(ValueError, match="bases"):
        multi_powmod([2, 3], [1], 35)
    with pytest.raises(ValueError, match="non-negative"):
        multi_powmod([2], [-1], 35)
    with pytest.raises(ValueError, match="window"):
        multi_powmod([2], [1], 35, window_bits=0)
