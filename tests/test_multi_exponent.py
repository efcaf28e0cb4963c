"""Simultaneous multi-exponentiation (Straus' method for few bases, buckets for many) against the product of
separate powmods."""

import random

import gmpy2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.cryptocore.arithmetic.multi_exponent import (
    BUCKET_MIN_BASES,
    SharedBases,
    multi_powmod,
    sliding_multi_powmod,
)

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


@given(TERMS, MODULI, st.integers(min_value=1, max_value=8))
def test_sliding_windows_and_shared_tables_equal_the_product_of_separate_powers(terms, modulus, window):
    bases, exponents = [b for b, _ in terms], [e for _, e in terms]
    expected = _separately(bases, exponents, modulus)
    assert sliding_multi_powmod(bases, exponents, modulus, window) == expected
    shared = SharedBases(bases, modulus, window)
    assert shared.power(exponents) == expected
    assert shared.power(exponents[::-1]) == _separately(bases, exponents[::-1], modulus)  # the tables are reused


MANY = st.lists(st.tuples(st.integers(min_value=0, max_value=2**300), st.integers(min_value=0, max_value=2**70)),
                min_size=BUCKET_MIN_BASES, max_size=3 * BUCKET_MIN_BASES)


@settings(max_examples=25)
@given(MANY, MODULI)
def test_many_bases_take_the_bucket_method_and_agree(terms, modulus):
    bases, exponents = [b for b, _ in terms], [e for _, e in terms]
    assert multi_powmod(bases, exponents, modulus) == _separately(bases, exponents, modulus)


def test_buckets_with_a_proof_batch_shape():
    """Thousands of 64-bit coefficients beside 192-bit ones, zeros among them, under a 2048-bit modulus."""
    rng = random.Random(5)
    modulus = rng.getrandbits(2048) | 1
    bases = [rng.getrandbits(2048) % modulus for _ in range(1500)]
    exponents = [0 if i % 97 == 0 else rng.getrandbits(64 if i % 3 else 192) for i in range(1500)]
    assert multi_powmod(bases, exponents, modulus) == _separately(bases, exponents, modulus)
    assert multi_powmod(bases, [0] * len(bases), modulus) == 1


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
