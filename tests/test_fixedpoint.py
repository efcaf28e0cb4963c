import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpdp.cryptocore.encodings.fixedpoint import FixedPoint
from mpdp.cryptocore.errors import EncodingOverflow
from mpdp.cryptocore.paillier import ciphertext as ct

REALS = st.floats(min_value=-1000.0, max_value=1000.0, allow_nan=False)


@given(REALS)
def test_round_trip_within_half_an_ulp(x):
    fixed = FixedPoint(bound=1000.0)
    assert abs(fixed.decode(fixed.encode(x)) - x) <= 2.0**-33


@given(st.lists(REALS, min_size=1, max_size=20))
def test_encrypted_sum_of_negative_and_positive_reals(keypair, xs):
    fixed = FixedPoint(bound=1000.0)
    n = keypair.public.n
    fixed.check_headroom(n, len(xs))
    total = ct.add(keypair.public.paillier, *[keypair.public.encryptor.encrypt(fixed.encode(x)) for x in xs])
    decoded = fixed.decode_residue(keypair.private.raw_decrypt(total), n, summands=len(xs))
    assert math.isclose(decoded, sum(xs), abs_tol=len(xs) * 2.0**-32)


def test_residue_form_of_negatives(keypair):
    fixed = FixedPoint(bound=2.0, fractional_bits=4)
    n = keypair.public.n
    assert fixed.encode_residue(-1.5, n) == n - 24
    assert fixed.decode_residue(n - 24, n) == -1.5


@pytest.mark.parametrize("bad", [1000.5, -1e9, float("nan"), float("inf")])
def test_out_of_range_is_an_error(bad):
    with pytest.raises(EncodingOverflow):
        FixedPoint(bound=1000.0).encode(bad)


def test_decode_rejects_impossible_sums():
    fixed = FixedPoint(bound=1.0)
    with pytest.raises(EncodingOverflow):
        fixed.decode(3 * fixed.scale, summands=2)


def test_headroom_check(keypair):
    n = keypair.public.n
    FixedPoint(bound=1.0).check_headroom(n, summands=100, mask_bound=1 << 800)
    with pytest.raises(EncodingOverflow):
        FixedPoint(bound=2.0**980).check_headroom(n, summands=2**20)
    with pytest.raises(EncodingOverflow):
        FixedPoint(bound=1.0).check_headroom(n, summands=2, mask_bound=n // 2)


def test_unusable_bounds_rejected():
    for bound in (0.0, -1.0, float("inf"), 2.0**1000):
        with pytest.raises(ValueError):
            FixedPoint(bound=bound)


def test_value_bits_cover_the_bound():
    fixed = FixedPoint(bound=1.0, fractional_bits=32)
    assert fixed.max_encoded == 2**32 and fixed.value_bits == 34
