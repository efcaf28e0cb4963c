from hypothesis import given
from hypothesis import strategies as st

from mpdp.cryptocore.arithmetic.shared_base import powmod_exponents

moduli = st.integers(min_value=3, max_value=2**600)


@given(st.integers(min_value=0, max_value=2**600), st.lists(st.integers(min_value=0, max_value=2**700), max_size=8),
       moduli, st.integers(min_value=1, max_value=8))
def test_agrees_with_pow(base, exponents, modulus, window_bits):
    assert powmod_exponents(base, exponents, modulus, window_bits) == [pow(base, e, modulus) for e in exponents]


def test_zero_exponents_and_a_paillier_sized_case():
    import secrets

    n = secrets.randbits(1024) | 1
    nsquare = n * n
    base = secrets.randbelow(nsquare)
    exponents = [0, 1, secrets.randbits(1020), 2**1019, secrets.randbits(200)]
    assert powmod_exponents(base, exponents, nsquare) == [pow(base, e, nsquare) for e in exponents]
