"""The group of the secure comparison's key: the subgroup of prime order q (256 bits) of Z_p^* (p of 2048 bits).

Derived from a public seed, so anyone can re-derive it (`derive`) and no one chose it: q is the first prime at
or above a 256-bit number expanded from the seed, p = 2·k·q + 1 for the first counter whose expanded k (1791
bits, top bit set) makes p a prime of 2048 bits, and g = 2^((p−1)/q) mod p. A discrete logarithm here is as
hard as factoring a 2048-bit modulus (about 112-bit security, like the Paillier keys).

Nothing about the group is secret or chosen by a role, so a comparison key is checked completely in public
(`elgamal.ElGamalPublicKey`), which a DGK or Paillier key is not: that needs a proof from its owner.
Z_p^* has other subgroups (of the small factors of k); every element that arrives is checked to lie in the one
of order q (`members`), or it could carry a small-order part that reveals exponents modulo that order.
"""

from __future__ import annotations

import hashlib

import gmpy2

from mpdp.cryptocore.arithmetic.shared_exponent import powmod_all

SEED = b"mpdp comparison group v1"
Q_BITS, P_BITS = 256, 2048
PRIME_COUNTER = 2259  # the first counter that gives a prime p (`derive` searches from 0)

P = int(
    "b077015a3cfb45c1e3855136895f3f4e85c599c0753b6b0d03fe1528eb69b6c47d97beb72e6328def8a439b10c49c89f"
    "9664eb701b034505c419da7eabd6c7e034126924f4bb11d44934ec3060c165d81f38ab0736a188b117c470acf50489bc"
    "a8f4d046bac192b33f2f7eaf919859ce384b1866f3ba217f3a27044928f4743a146e035626af705ba458da795a7111b2"
    "e737b7432e9c3ca1b30faef9a4e0fe431b1c03e53ff72782ca345c90bd8b29ea37decacc39867933ba2378ea529a4cb5"
    "6213dbf5cb1fad7887842f3a608eb0815304bc460dcda42a0e780ebe403a1a80b4d49471791cc6cd0f642b3adfd7328a"
    "31456af5b889b268c4ea29967fad16b5", 16)
Q = int(
    "c9bed5ca15be66f4c65d10058b93b454356e46fd66329b984fa6499dad390c8d", 16)
G = int(
    "5a8d7d70254572425dc2a0741c462d8b433d27c28ac810fdd246ad0f24196e64b2953353679b6a7d0c1a19e5fbf877e7"
    "31961b7ff9456c9aac2e07f933ddf8759a7e245545c0e94a9fdd960d49dca05276eed61d440e050b8099fae379c7429b"
    "e63f1019bcc8641fb9669f503d02244a3dbc5e2ce883c042b878af153cc1fd7549e4c7b81f2aa5856f9acadbb66e5482"
    "60fda0abd2efc9310cccd7626e4eebcc58a9d0f86bc34ec3f1787703adafe46b4a0d2392d45476b73d21e33e0be0bf32"
    "c61ad681b160ecd2b0af4b22fb71b5626d8d75604eb281b581756b7b44255dca0e9b1779d9ae9a00eba668352bdee657"
    "48849f119d030038539b823895ed1954", 16)

ELEMENT_BYTES = (P_BITS + 7) // 8


def expand(label: bytes, counter: int, bits: int) -> int:
    """`bits` bits of SHAKE-256 over the seed, a label and a counter."""
    data = hashlib.shake_256(SEED + b"|" + label + b"|" + counter.to_bytes(4, "big")).digest((bits + 7) // 8)
    return int.from_bytes(data, "big") >> (8 * len(data) - bits)


def derive(first_counter: int = 0) -> tuple[int, int, int, int]:
    """(p, q, g, counter) from the seed, searching p from `first_counter` (about a second from 0)."""
    q = int(gmpy2.next_prime(expand(b"q", 0, Q_BITS) | 1 << (Q_BITS - 1)))
    counter = first_counter
    while True:
        k = expand(b"p", counter, P_BITS - Q_BITS - 1) | 1 << (P_BITS - Q_BITS - 2)
        p = 2 * k * q + 1
        if p.bit_length() == P_BITS and gmpy2.is_prime(p, 64):
            return p, q, pow(2, (p - 1) // q, p), counter
        counter += 1


def in_range(value: int) -> bool:
    return 1 <= value < P


def members(values: list[int]) -> bool:
    """Every value lies in the subgroup of order q (v^q = 1; one 256-bit exponentiation each, on every core)."""
    return all(in_range(value) for value in values) and all(v == 1 for v in powmod_all(values, Q, P))
