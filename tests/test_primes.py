import gmpy2
import pytest

from mpdp.cryptocore.primes import blum_prime, distinct_prime_pair, safe_prime


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
