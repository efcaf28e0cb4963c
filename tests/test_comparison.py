import dataclasses
import secrets

import gmpy2
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from phe import PaillierPrivateKey, PaillierPublicKey

from cryptocore import ciphertext as ct
from cryptocore.comparison import ComparisonKeyHolder, ComparisonValueHolder, EncryptedBits, compare
from cryptocore.errors import (
    CryptoError,
    InvalidCiphertext,
    InvalidKey,
    KeyMismatch,
    ProtocolStateError,
)
from cryptocore.paillier import KeyPair, PublicKey
from cryptocore.primes import blum_prime

BITS = 24
TOP = 2**BITS - 1
operand = st.integers(min_value=0, max_value=TOP)


@given(operand, operand)
@example(0, 0)
@example(TOP, TOP)
@example(TOP, 0)
@example(0, TOP)
@example(TOP, TOP - 1)
@example(TOP - 1, TOP)
@example(1, 0)
@example(0, 1)
@example(2**23, 2**23 - 1)
@example(2**23 - 1, 2**23)
def test_agrees_with_greater_than(keypair, x, y):
    assert compare(keypair, x, y, BITS) == (x > y)


@given(operand, operand)
@example(TOP, 0)
@example(0, TOP)
@example(5, 5)
def test_reversed_comparison_tells_the_key_holder_y_greater_than_x(keypair, x, y):
    key_holder = ComparisonKeyHolder(keypair, y, BITS)
    value_holder = ComparisonValueHolder(keypair.public, x, BITS, reverse=True)
    assert key_holder.receive(value_holder.respond(key_holder.encrypted_bits())) == (y > x)


@given(operand)
def test_equal_values_and_neighbours(keypair, x):
    assert compare(keypair, x, x, BITS) is False
    if x < TOP:
        assert compare(keypair, x + 1, x, BITS) is True
        assert compare(keypair, x, x + 1, BITS) is False


@given(operand, operand)
def test_key_holder_sees_at_most_one_zero(keypair, x, y):
    key_holder = ComparisonKeyHolder(keypair, y, BITS)
    answer = ComparisonValueHolder(keypair.public, x, BITS).respond(key_holder.encrypted_bits())
    zeros = [keypair.is_zero(ct.from_bytes(keypair.public.paillier, c)) for c in answer.ciphertexts]
    assert sum(zeros) == (1 if x > y else 0)


def test_one_bit_and_wide_comparisons(keypair):
    assert compare(keypair, 1, 0, 1) and not compare(keypair, 0, 1, 1)
    big = 2**115
    assert compare(keypair, big + 1, big, 116) and not compare(keypair, big, big + 1, 116)


def test_operands_outside_range_rejected(keypair):
    with pytest.raises(CryptoError):
        ComparisonKeyHolder(keypair, 2**BITS, BITS)
    with pytest.raises(CryptoError):
        ComparisonValueHolder(keypair.public, -1, BITS)


def test_messages_are_wire_ready(keypair):
    message = ComparisonKeyHolder(keypair, 5, BITS).encrypted_bits()
    assert message.key_id == keypair.public.key_id
    assert len(message.ciphertexts) == BITS
    assert all(isinstance(c, bytes) and len(c) == 256 for c in message.ciphertexts)


def test_out_of_order_steps_rejected(keypair):
    key_holder = ComparisonKeyHolder(keypair, 5, BITS)
    value_holder = ComparisonValueHolder(keypair.public, 7, BITS)
    premature = ComparisonValueHolder(keypair.public, 7, BITS).respond(ComparisonKeyHolder(keypair, 1, BITS).encrypted_bits())
    with pytest.raises(ProtocolStateError):
        key_holder.receive(premature)
    first = key_holder.encrypted_bits()
    with pytest.raises(ProtocolStateError):
        key_holder.encrypted_bits()
    answer = value_holder.respond(first)
    with pytest.raises(ProtocolStateError):
        value_holder.respond(first)
    assert key_holder.receive(answer) is True
    with pytest.raises(ProtocolStateError):
        key_holder.receive(answer)


def test_bad_messages_rejected_without_changing_state(keypair, other_keypair):
    key_holder = ComparisonKeyHolder(keypair, 5, BITS)
    first = key_holder.encrypted_bits()
    value_holder = ComparisonValueHolder(keypair.public, 9, BITS)
    with pytest.raises(KeyMismatch):
        value_holder.respond(dataclasses.replace(first, key_id=other_keypair.public.key_id))
    with pytest.raises(CryptoError):
        value_holder.respond(dataclasses.replace(first, ciphertexts=first.ciphertexts[:-1]))
    with pytest.raises(InvalidCiphertext):
        value_holder.respond(dataclasses.replace(first, ciphertexts=(b"\x00" * 256,) + first.ciphertexts[1:]))
    answer = value_holder.respond(first)  # still usable after the rejections
    with pytest.raises(InvalidCiphertext):
        key_holder.receive(dataclasses.replace(answer, ciphertexts=answer.ciphertexts[:-1] + (b"\x01",)))
    assert key_holder.receive(answer) is True


# --- The key owner (B) as an attacker: what it may learn is the bit, nothing else. ---

SMALL = 16


def _respond_and_open(keypair, x: int, y: int, bits: int = SMALL, encrypted=None):
    """A's answer as B decrypts it: (plaintext residues, the randomness ρ of each ciphertext)."""
    key_holder = ComparisonKeyHolder(keypair, y, bits)
    message = encrypted or key_holder.encrypted_bits()
    answer = ComparisonValueHolder(keypair.public, x, bits).respond(message)
    private, n, nsquare = keypair.private, keypair.public.n, keypair.public.paillier.nsquare
    phi = (private.p - 1) * (private.q - 1)
    n_inverse = int(gmpy2.invert(n, phi))
    plaintexts, randomness = [], []
    for data in answer.ciphertexts:
        c = int.from_bytes(data, "big")
        m = private.raw_decrypt(c)
        rho_n = c * gmpy2.invert(1 + m * n, nsquare) % nsquare  # = ρ^n mod n²; B knows p, q and takes the n-th root
        plaintexts.append(m)
        randomness.append(int(gmpy2.powmod(rho_n % n, n_inverse, n)))
    return plaintexts, randomness


def test_the_zero_sits_at_a_uniform_position(keypair):
    """Without the shuffle the zero's position is the highest differing bit: x's bits leak."""
    positions = [_respond_and_open(keypair, 0b1011_0000_0000_0001, 0b1010_0000_0000_0000)[0].index(0)
                 for _ in range(30)]
    assert len(set(positions)) >= 5, positions


def test_masks_are_uniform_units_not_small_multipliers(keypair):
    """B sees r_i·c_i mod n with |c_i| ≤ 3ℓ + 2; masks from a small set would let B divide them out."""
    n = keypair.public.n
    plaintexts, _ = _respond_and_open(keypair, 1234, 50000)  # x < y: no zero
    candidates = [c for c in range(-3 * SMALL - 3, 3 * SMALL + 4) if c]
    for m in plaintexts:
        for c in candidates:
            r = m * int(gmpy2.invert(c % n, n)) % n
            assert 2**24 < r < n - 2**24, "a plaintext is a small multiple of a possible c_i"


def test_answers_are_rerandomised_with_uniform_units_not_with_the_owners_h_s(keypair):
    """B chooses its bit ciphertexts' randomness (here ρ = 1: Enc(y_i) = 1 + y_i·n). Without a
    re-randomisation, or with one B controls, each answer's ρ would be a function of B's choices."""
    y, n = 50000, keypair.public.n
    crafted = EncryptedBits(keypair.public.key_id, tuple(
        ct.to_bytes(keypair.public.paillier, 1 + ((y >> i) & 1) * n) for i in range(SMALL)))
    _, randomness = _respond_and_open(keypair, 1234, y, encrypted=crafted)
    assert all(rho != 1 for rho in randomness)
    assert len(set(randomness)) == SMALL


def _prime_with_factor_three(bits: int) -> int:
    while True:
        p = blum_prime(bits)
        if p % 3 == 1:
            return p


def _element_of_order_three(p: int) -> int:
    while True:
        h = int(gmpy2.powmod(secrets.randbelow(p - 2) + 2, (p - 1) // 3, p))
        if h != 1:
            return h


@pytest.fixture(scope="module")
def owner_with_order_three_hs():
    """A key owner who publishes h_s of order 3: it passes every public check (not ±1 modulo p or q),
    and DJN randomness h_s^r would take only three values."""
    p, q = _prime_with_factor_three(512), _prime_with_factor_three(512)
    n = p * q
    h_p, h_q = _element_of_order_three(p), _element_of_order_three(q)
    h = (h_p * q * int(gmpy2.invert(q, p)) + h_q * p * int(gmpy2.invert(p, q))) % n  # CRT: order 3 modulo p and q
    hs = int(gmpy2.powmod(h, n, n * n))
    public = PublicKey(PaillierPublicKey(n), hs)  # validated: accepted
    return KeyPair(public, PaillierPrivateKey(public.paillier, p, q))


def test_an_owner_with_a_small_order_h_s_learns_nothing_beyond_the_bit(owner_with_order_three_hs):
    keypair = owner_with_order_three_hs
    n, nsquare = keypair.public.n, keypair.public.paillier.nsquare
    assert gmpy2.powmod(keypair.public.hs, 3, nsquare) == 1
    plaintexts, randomness = _respond_and_open(keypair, 40000, 1234)
    assert sum(1 for m in plaintexts if m == 0) == 1  # the bit, as the protocol promises
    assert all(gmpy2.powmod(rho, 3, n) != 1 for rho in randomness)  # ρ is not in ⟨h⟩


def _unvalidated_key(n: int) -> PublicKey:
    """A public key built without the checks, as an owner would hand one to a value holder that skipped them."""
    key = object.__new__(PublicKey)
    object.__setattr__(key, "paillier", PaillierPublicKey(n))
    object.__setattr__(key, "hs", 4)
    return key


@pytest.mark.parametrize("x", [0b10110110, 0b10000000, 0b11111111])
def test_an_owner_whose_modulus_has_a_small_factor_would_read_more_than_the_bit(x):
    """The attack: n = 3·Q passes "odd, even size, not prime, not a square". The owner reads each r_i·c_i mod 3,
    zero exactly where 3 | c_i; against his y = 0 that is every i with x_i = 1 (c_i = 3·S_i there, 3·S_i − 1
    elsewhere), so he counts x's one bits, not just [x > y]. The key checks refuse such an n."""
    while True:
        n = 3 * int(gmpy2.next_prime(secrets.randbits(1022) | 1 << 1021))
        if n.bit_length() == 1024:
            break
    forged = _unvalidated_key(n)
    nsquare = n * n
    zeros = tuple(ct.to_bytes(forged.paillier, int(gmpy2.powmod(ct.random_unit(n), n, nsquare))) for _ in range(8))
    answer = ComparisonValueHolder(forged, x, 8).respond(EncryptedBits(forged.key_id, zeros))
    # c ≡ (1+n)^m·ρ^n: c² ≡ 1 + 2·m·n (mod 9) since ρ^(2n) ≡ 1 mod 9, so c² ≡ 1 mod 9 exactly when 3 | m.
    divisible = sum(1 for data in answer.ciphertexts if gmpy2.powmod(ct.from_bytes(forged.paillier, data), 2, 9) == 1)
    assert divisible == bin(x).count("1")
    with pytest.raises(InvalidKey, match="no prime factor below"):
        PublicKey.from_integers(n, 4)


def test_the_value_holder_validates_the_owners_key(keypair):
    n = keypair.public.n
    for hs in (1, n * n - 1):  # h_s = ±1 would make "re-randomised" values readable in full
        with pytest.raises(InvalidKey):
            PublicKey.from_integers(n, hs)
    with pytest.raises(InvalidKey):
        ComparisonValueHolder(keypair.public, 5, SMALL, key_bits=2048)  # not the session's key size
    holder = ComparisonValueHolder(keypair.public, 5, SMALL, key_bits=n.bit_length())
    other = ComparisonKeyHolder(keypair, 3, SMALL).encrypted_bits()
    with pytest.raises(KeyMismatch):
        holder.respond(dataclasses.replace(other, key_id=bytes(32)))


# --- Prepared re-randomisers (the offline phase), and work that does not depend on x. ---


def test_the_value_holders_work_does_not_depend_on_x(keypair, monkeypatch):
    """B sees how long A takes. A's exponentiations must not count x's one bits (B knows d = z + 2^M + ρ′ in
    Pathak, so the weight of A's input would tell him about z): the same work for x = 0 and x = 2^ℓ − 1."""
    import gmpy2 as real_gmpy2

    from cryptocore import comparison

    counted = []
    original = real_gmpy2.powmod

    class Counting:
        def __getattr__(self, name):
            return getattr(real_gmpy2, name)

        @staticmethod
        def powmod(base, exponent, modulus):
            counted.append(int(exponent).bit_length() > 64)  # a full-length exponentiation
            return original(base, exponent, modulus)

    monkeypatch.setattr(comparison, "gmpy2", Counting())
    work = []
    for x in (0, 2**SMALL - 1, 0b1010_1010_1010_1010):
        counted.clear()
        _respond_and_open(keypair, x, 1234)
        work.append(sum(counted))
    assert work == [work[0]] * 3 and work[0] >= SMALL, work


def test_prepared_re_randomisers_are_used_once(keypair):
    """Each answer takes its ρ^n from the process's pool while it lasts: no two ciphertexts share a ρ (the owner
    would link them), the pool shrinks by one per bit, and the answers still decide their pairs."""
    from cryptocore import nth_powers
    from cryptocore.parallel_comparison import ComparisonJob, answer_all

    n = keypair.public.n
    pool = nth_powers.pool_for(n)
    pool.clear()
    pool.add([nth_powers.fresh(n) for _ in range(SMALL + 5)])  # enough for one answer and a bit of the next
    prepared = set(pool._values)
    holders, jobs = [], []
    for x, y in ((1234, 50000), (50000, 1234)):
        holder = ComparisonKeyHolder(keypair, y, SMALL)
        holders.append(holder)
        jobs.append(ComparisonJob(x, SMALL, False, holder.encrypted_bits()))
    answers = answer_all(keypair.public, None, jobs)
    assert len(pool) == 0
    assert [h.receive(a) for h, a in zip(holders, answers)] == [False, True]
    private, nsquare = keypair.private, keypair.public.paillier.nsquare
    seen = []
    for answer in answers:
        for data in answer.ciphertexts:
            c = int.from_bytes(data, "big")
            seen.append(int(c * gmpy2.invert(1 + private.raw_decrypt(c) * n, nsquare) % nsquare))
    assert len(set(seen)) == 2 * SMALL  # distinct randomness everywhere
    assert not prepared & set(seen)


def test_prepare_fills_the_pool_in_the_workers_and_an_answer_cancels_the_rest(keypair):
    import time

    from cryptocore import nth_powers
    from cryptocore.parallel_comparison import prepare

    n = keypair.public.n
    pool = nth_powers.pool_for(n)
    pool.clear()
    assert prepare(n, 20) == 20
    deadline = time.monotonic() + 60
    while len(pool) < 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(pool) == 20 and len(set(pool._values)) == 20
    phi = (keypair.private.p - 1) * (keypair.private.q - 1)
    assert all(gmpy2.powmod(value, phi, n * n) == 1 for value in pool._values)  # n-th residues: order divides φ
    assert prepare(n, 20) == 0  # full: nothing asked
    pool.clear()


def test_the_key_holder_tests_every_answer_whatever_it_finds(keypair, monkeypatch):
    """Stopping at the first zero would show its (uniform) position and, when the time is the longest, that
    there was none: the leader would learn the bit t and from it a bit of z. Every answer is tested."""
    tested = []
    original = KeyPair.zero_flags

    def spy(self, values):
        tested.append(len(values))
        return original(self, values)

    monkeypatch.setattr(KeyPair, "zero_flags", spy)
    for x, y in ((5, 3), (3, 5)):
        holder = ComparisonKeyHolder(keypair, y, SMALL)
        holder.receive(ComparisonValueHolder(keypair.public, x, SMALL).respond(holder.encrypted_bits()))
        assert holder.result is (x > y)
    assert tested == [SMALL, SMALL]
