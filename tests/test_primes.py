import gmpy2
import pytest

from mpdp.cryptocore.arithmetic.primes import blum_prime, distinct_prime_pair, safe_prime


@pytest.mark.parametrize("bits", [64, 256, 512])
def test_safe_prime_is_safe_and_exact_size(bits):
    p = safe_prime(bits)
    assert p.bit_length() == bits
    assert gmpy2.is_prime(p) and gmpy2.is_prime((p - 1) // 2)
    assert p % 4 == 3


@pytest.mark.parametrize("bits", [64, 512])
def test_blum_prime(bits):
    p = blum_prime(bits)
    assert p.bit_length() == bits and gmpy2.is_prime(p) and p % 4 == 3


def test_prime_pair_is_distinct_and_gives_full_size_modulus():
    p, q = distinct_prime_pair(256, safe_prime)
    assert p != q
    assert (p * q).bit_length() == 512


def test_tiny_sizes_rejected():
    with pytest.raises(ValueError):
        safe_prime(8)


def test_strong_pseudoprimes_to_many_fixed_bases_are_refused():
    """Composites that pass Miller–Rabin for every prime base up to 23 (3825123056546413051) and up to 37
    (318665857834031151167461, 3317044064679887385961981; Sorenson–Webster 2015): a primality test made of
    fixed-base rounds passes them; the one the generators use (gmpy2's, Baillie–PSW first on GMP ≥ 6.2, so
    even with its rounds cut to one) refuses them."""
    from mpdp.cryptocore.arithmetic import primes

    for composite in (3825123056546413051, 318665857834031151167461, 3317044064679887385961981):
        assert all(gmpy2.is_strong_prp(composite, base) for base in (2, 3, 5, 7, 11, 13, 17, 19, 23))
        assert not primes._is_probable_prime(composite)
