import dataclasses

import gmpy2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpdp.cryptocore.comparison import elgamal_bit_proof
from mpdp.cryptocore.comparison import group as comparison_group
from mpdp.cryptocore.comparison.elgamal import Ciphertext, ElGamalKeyPair, ElGamalPublicKey
from mpdp.cryptocore.comparison.group import G, P, Q
from mpdp.cryptocore.comparison.protocol import ComparisonKeyHolder, ComparisonValueHolder, EncryptedBits, compare
from mpdp.cryptocore.errors import CryptoError, InvalidCiphertext, InvalidKey, KeyMismatch, ProtocolStateError

BITS = 24
TOP = 2**BITS - 1
SMALL = 16
operand = st.integers(min_value=0, max_value=TOP)


@pytest.fixture(scope="module")
def owner() -> ElGamalKeyPair:
    return ElGamalKeyPair.generate()


@pytest.fixture(scope="module")
def other_owner() -> ElGamalKeyPair:
    return ElGamalKeyPair.generate()


def _plaintext_is_zero(owner, data: bytes) -> bool:
    c = Ciphertext.from_bytes(data)
    return c.b == pow(c.a, owner.x, P)


# Each property runs at its edges in the quick suite and on random operands in the slow one: one comparison in
# the 2048-bit group takes about a CPU-second with its proofs.
EDGES = [(0, 0), (TOP, TOP), (TOP, 0), (0, TOP), (TOP, TOP - 1), (TOP - 1, TOP), (1, 0), (0, 1),
         (2**23, 2**23 - 1), (2**23 - 1, 2**23)]


def _agrees_with_greater_than(owner, x, y):
    assert compare(owner, x, y, BITS) == (x > y)


def _reversed_comparison_tells_the_key_holder_y_greater_than_x(owner, x, y):
    key_holder = ComparisonKeyHolder(owner, y, BITS)
    value_holder = ComparisonValueHolder(owner.public, x, BITS, reverse=True)
    assert key_holder.receive(value_holder.respond(key_holder.encrypted_bits())) == (y > x)


def _equal_values_and_neighbours(owner, x):
    assert compare(owner, x, x, BITS) is False
    if x < TOP:
        assert compare(owner, x + 1, x, BITS) is True
        assert compare(owner, x, x + 1, BITS) is False


def _key_holder_sees_at_most_one_zero(owner, x, y):
    key_holder = ComparisonKeyHolder(owner, y, BITS)
    answer = ComparisonValueHolder(owner.public, x, BITS).respond(key_holder.encrypted_bits())
    assert sum(_plaintext_is_zero(owner, c) for c in answer.ciphertexts) == (1 if x > y else 0)


@pytest.mark.parametrize("x, y", EDGES)
def test_agrees_with_greater_than_at_the_edges(owner, x, y):
    _agrees_with_greater_than(owner, x, y)


@pytest.mark.slow
@given(operand, operand)
def test_agrees_with_greater_than(owner, x, y):
    _agrees_with_greater_than(owner, x, y)


@pytest.mark.parametrize("x, y", [(TOP, 0), (0, TOP), (5, 5)])
def test_reversed_comparison_at_the_edges(owner, x, y):
    _reversed_comparison_tells_the_key_holder_y_greater_than_x(owner, x, y)


@pytest.mark.slow
@given(operand, operand)
def test_reversed_comparison_tells_the_key_holder_y_greater_than_x(owner, x, y):
    _reversed_comparison_tells_the_key_holder_y_greater_than_x(owner, x, y)


@pytest.mark.parametrize("x", [0, 2**23 - 1, TOP - 1, TOP])
def test_equal_values_and_neighbours_at_the_edges(owner, x):
    _equal_values_and_neighbours(owner, x)


@pytest.mark.slow
@given(operand)
def test_equal_values_and_neighbours(owner, x):
    _equal_values_and_neighbours(owner, x)


@pytest.mark.parametrize("x, y", [(TOP, 0), (0, TOP), (2**23, 2**23 - 1), (5, 5)])
def test_key_holder_sees_at_most_one_zero_at_the_edges(owner, x, y):
    _key_holder_sees_at_most_one_zero(owner, x, y)


@pytest.mark.slow
@given(operand, operand)
def test_key_holder_sees_at_most_one_zero(owner, x, y):
    _key_holder_sees_at_most_one_zero(owner, x, y)


def test_one_bit_and_wide_comparisons(owner):
    assert compare(owner, 1, 0, 1) and not compare(owner, 0, 1, 1)
    big = 2**115
    assert compare(owner, big + 1, big, 116) and not compare(owner, big, big + 1, 116)


def test_operands_outside_range_rejected(owner):
    with pytest.raises(CryptoError):
        ComparisonKeyHolder(owner, 2**BITS, BITS)
    with pytest.raises(CryptoError):
        ComparisonValueHolder(owner.public, -1, BITS)
    with pytest.raises(ValueError):
        ComparisonValueHolder(owner.public, 0, 2000)  # beyond MAX_BITS: a request's cost stays bounded


def test_messages_are_wire_ready(owner):
    message = ComparisonKeyHolder(owner, 5, BITS).encrypted_bits()
    assert message.key_id == owner.public.key_id
    assert len(message.ciphertexts) == BITS
    assert all(isinstance(c, bytes) and len(c) == 512 for c in message.ciphertexts)


def test_out_of_order_steps_rejected(owner):
    key_holder = ComparisonKeyHolder(owner, 5, BITS)
    value_holder = ComparisonValueHolder(owner.public, 7, BITS)
    premature = ComparisonValueHolder(owner.public, 7, BITS).respond(ComparisonKeyHolder(owner, 1, BITS).encrypted_bits())
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


def _outside_the_subgroup(data: bytes) -> bytes:
    """The same ciphertext with its first component negated: −1 has order 2, outside the subgroup of order q."""
    c = Ciphertext.from_bytes(data)
    return Ciphertext(P - c.a, c.b).to_bytes()


def test_bad_messages_rejected_without_changing_state(owner, other_owner):
    key_holder = ComparisonKeyHolder(owner, 5, BITS)
    first = key_holder.encrypted_bits()
    value_holder = ComparisonValueHolder(owner.public, 9, BITS)
    with pytest.raises(KeyMismatch):
        value_holder.respond(dataclasses.replace(first, key_id=other_owner.public.key_id))
    with pytest.raises(CryptoError):
        value_holder.respond(dataclasses.replace(first, ciphertexts=first.ciphertexts[:-1]))
    for bad in (b"\x00" * 512, b"\x01" * 511, P.to_bytes(256, "big") * 2):
        with pytest.raises(InvalidCiphertext):
            value_holder.respond(dataclasses.replace(first, ciphertexts=(bad,) + first.ciphertexts[1:]))
    with pytest.raises(CryptoError, match="subgroup"):
        value_holder.respond(dataclasses.replace(first, ciphertexts=(_outside_the_subgroup(first.ciphertexts[0]),)
                                                 + first.ciphertexts[1:]))
    answer = value_holder.respond(first)  # still usable after the rejections
    with pytest.raises(InvalidCiphertext):
        key_holder.receive(dataclasses.replace(answer, ciphertexts=answer.ciphertexts[:-1] + (b"\x01",)))
    assert key_holder.receive(answer) is True


# --- The group and the key: public, and checked in public. ---


@pytest.mark.slow
def test_the_group_is_derived_from_its_seed_and_is_what_it_claims():
    p, q, g, counter = comparison_group.derive()  # from counter 0: the first prime, not one chosen
    assert (p, q, g, counter) == (P, Q, G, comparison_group.PRIME_COUNTER)
    assert gmpy2.is_prime(P, 64) and gmpy2.is_prime(Q, 64) and (P - 1) % Q == 0
    assert P.bit_length() == 2048 and Q.bit_length() == 256
    assert G != 1 and pow(G, Q, P) == 1


def test_a_comparison_key_outside_the_subgroup_or_one_is_refused(owner):
    for h in (1, 0, P, P - 1, 2, P - owner.public.h):
        with pytest.raises(InvalidKey):
            ElGamalPublicKey(h)
    with pytest.raises(InvalidKey):
        ElGamalPublicKey.from_bytes(owner.public.to_bytes()[1:])
    assert ElGamalPublicKey.from_bytes(owner.public.to_bytes()) == owner.public


# --- The key owner (B) as an attacker: what it may learn is the bit, nothing else. ---


def _respond(owner, x: int, y: int, bits: int = SMALL, encrypted=None) -> list[Ciphertext]:
    key_holder = ComparisonKeyHolder(owner, y, bits)
    message = encrypted or key_holder.encrypted_bits()
    answer = ComparisonValueHolder(owner.public, x, bits).respond(message)
    return [Ciphertext.from_bytes(data) for data in answer.ciphertexts]


def _decrypted(owner, c: Ciphertext) -> int:
    """g^(r·c_i), all the owner can compute from an answer."""
    return int(c.b * gmpy2.invert(pow(c.a, owner.x, P), P) % P)


@pytest.mark.slow
def test_the_zero_sits_at_a_uniform_position(owner):
    """Without the shuffle the zero's position is the highest differing bit: x's bits leak."""
    positions = []
    for _ in range(30):
        answer = _respond(owner, 0b1011_0000_0000_0001, 0b1010_0000_0000_0000)
        positions.append([_decrypted(owner, c) for c in answer].index(1))
    assert len(set(positions)) >= 5, positions


@pytest.mark.slow
def test_masks_are_uniform_not_small_multipliers(owner):
    """B sees g^(r_i·c_i) with |c_i| ≤ 3ℓ + 2. With r_i from a small set he would find r_i·c_i in a table of
    g^k for small k; with r_i uniform in Z_q^* none is there."""
    table, power = set(), pow(G, Q - 2**16, P)
    for _ in range(2**17):  # g^k for |k| ≤ 2^16, one multiplication each
        table.add(power)
        power = power * G % P
    answer = _respond(owner, 1234, 50000)  # x < y: no zero
    assert not any(_decrypted(owner, c) in table for c in answer)


def test_answers_are_rerandomised_whatever_the_owner_chose(owner):
    """B chooses its bit ciphertexts' randomness (here s = 0: Enc(y_i) = (1, g^y_i)). Without a
    re-randomisation every answer's first component would be 1 and the second g^(r·c_i) in the clear."""
    y = 50000
    ciphertexts = [Ciphertext(1, G if (y >> i) & 1 else 1) for i in range(SMALL)]
    crafted = EncryptedBits(owner.public.key_id, tuple(c.to_bytes() for c in ciphertexts), tuple(
        elgamal_bit_proof.prove(owner.public, c, (y >> i) & 1, 0, b"").to_bytes() for i, c in enumerate(ciphertexts)))
    answer = _respond(owner, 1234, y, encrypted=crafted)
    assert all(c.a != 1 for c in answer) and len({c.a for c in answer}) == SMALL


def test_an_owner_cannot_send_components_outside_the_subgroup(owner):
    """With a = −g^t, the leader's a^r would carry (−1)^r: the parity of each blinding factor, where the
    membership check refuses it before any blinding."""
    message = ComparisonKeyHolder(owner, 5, SMALL).encrypted_bits()
    tainted = dataclasses.replace(message, ciphertexts=tuple(_outside_the_subgroup(c) for c in message.ciphertexts))
    with pytest.raises(CryptoError, match="subgroup"):
        ComparisonValueHolder(owner.public, 7, SMALL).respond(tainted)


def _non_bit_probe(owner, x: int) -> int:
    """The owner's attack with non-bits, against a value holder that skips the bit proofs: v_top = −1 makes
    c_top = x_top, and v_(top−1) = −4 makes c_(top−1) = x_(top−1) + 9·x_top; the other v are random, so their c
    are not zero. The number of zeros then tells x_top = 1, or x_top = 0 and which x_(top−1): more than the one
    bit a comparison reveals."""
    values = [comparison_group.expand(b"test", i, 200) for i in range(SMALL - 2)] + [Q - 4, Q - 1]
    ciphertexts = [owner.public.encrypt(v) for v in values]
    message = EncryptedBits(owner.public.key_id, tuple(c.to_bytes() for c in ciphertexts), (bytes(128),) * SMALL)
    answer = ComparisonValueHolder(owner.public, x, SMALL).respond(message)
    return sum(_plaintext_is_zero(owner, c) for c in answer.ciphertexts)


def test_an_owner_who_encrypts_non_bits_would_learn_more_than_the_bit_and_is_refused(owner, monkeypatch):
    with monkeypatch.context() as patched:
        patched.setattr(ComparisonValueHolder, "_verify_bits", lambda self, encrypted, proofs: None)
        counts = {x >> (SMALL - 2): _non_bit_probe(owner, x) for x in (0b00 << 14 | 77, 0b01 << 14 | 5, 0b10 << 14 | 9)}
    assert counts == {0b00: 2, 0b01: 1, 0b10: 0}  # three outcomes: more than a bit
    with pytest.raises(elgamal_bit_proof.BitProofInvalid):
        _non_bit_probe(owner, 77)
    # A proof made for a non-bit by the honest prover's code, claiming either bit, fails too.
    ciphertext, randomness = owner.public.encrypt_with_randomness(2)
    for claim in (0, 1):
        proof = elgamal_bit_proof.prove(owner.public, ciphertext, claim, randomness, b"context")
        with pytest.raises(elgamal_bit_proof.BitProofInvalid):
            elgamal_bit_proof.verify(owner.public, ciphertext, proof, b"context")


def test_bit_proofs_are_bound_to_their_context_and_checked_before_any_exponentiation(owner, monkeypatch):
    holder = ComparisonKeyHolder(owner, 5, SMALL, context=b"pair (1, 2)")
    message = holder.encrypted_bits()
    with pytest.raises(elgamal_bit_proof.BitProofInvalid):  # replayed into another comparison
        ComparisonValueHolder(owner.public, 7, SMALL, context=b"pair (3, 4)").respond(message)
    from mpdp.cryptocore.comparison import protocol as comparison

    monkeypatch.setattr(comparison, "all_members", lambda values: pytest.fail("exponentiated before the cheap checks"))
    for proofs in (message.proofs[:-1], message.proofs[:-1] + (bytes(127),), message.proofs[:-1] + (b"\xff" * 128,)):
        with pytest.raises(CryptoError):
            ComparisonValueHolder(owner.public, 7, SMALL, context=b"pair (1, 2)").respond(
                dataclasses.replace(message, proofs=proofs))
    monkeypatch.undo()
    assert holder.receive(ComparisonValueHolder(owner.public, 7, SMALL, context=b"pair (1, 2)").respond(message))


# --- The value holder (A) as an attacker against the owner's key. ---


@pytest.mark.parametrize("x_parity", [0, 1])
def test_an_answer_outside_the_subgroup_would_read_the_owners_key_and_is_refused(x_parity):
    """A sends (−g^t, h^t): it decrypts to zero exactly when (−1)^x = 1, so B's result would give A the
    parity of B's long-lived key (and with elements of other small orders, x modulo those). B refuses it."""
    while True:
        owner = ElGamalKeyPair.generate()
        if owner.x % 2 == x_parity:
            break
    t = 12345
    probe = Ciphertext(P - pow(G, t, P), pow(owner.public.h, t, P))
    assert (probe.b == pow(probe.a, owner.x, P)) == (x_parity == 0)  # the leak the check closes
    key_holder = ComparisonKeyHolder(owner, 1, 1)
    key_holder.encrypted_bits()
    with pytest.raises(CryptoError, match="subgroup"):
        key_holder.receive(type("Answer", (), {"key_id": owner.public.key_id, "ciphertexts": (probe.to_bytes(),)})())
    assert key_holder.result is None


# --- Work that does not depend on x, and every answer tested. ---


def test_the_value_holders_work_does_not_depend_on_x(owner, monkeypatch):
    """B sees how long A takes. A's exponentiations must not count x's one bits (B knows d = z + 2^M + ρ′ in
    Pathak, so the weight of A's input would tell him about z): the same work for x = 0 and x = 2^ℓ − 1."""
    from mpdp.cryptocore.comparison import protocol as comparison

    counted = []
    real = gmpy2.powmod_base_list

    class Counting:
        def __getattr__(self, name):
            return getattr(gmpy2, name)

        @staticmethod
        def powmod_base_list(bases, exponent, modulus):
            counted.append(len(bases))
            return real(bases, exponent, modulus)

    monkeypatch.setattr(comparison, "gmpy2", Counting())
    work = []
    for x in (0, 2**SMALL - 1, 0b1010_1010_1010_1010):
        counted.clear()
        _respond(owner, x, 1234)
        work.append(sum(counted))
    assert work == [2 * SMALL] * 3, work


def test_the_key_holder_tests_every_answer_whatever_it_finds(owner, monkeypatch):
    """Stopping at the first zero would show its (uniform) position and, when the time is the longest, that
    there was none: the leader would learn the bit t and from it a bit of z. Every answer is tested."""
    tested = []
    original = ElGamalKeyPair.zero_flags

    def spy(self, values):
        tested.append(len(values))
        return original(self, values)

    monkeypatch.setattr(ElGamalKeyPair, "zero_flags", spy)
    for x, y in ((5, 3), (3, 5)):
        holder = ComparisonKeyHolder(owner, y, SMALL)
        holder.receive(ComparisonValueHolder(owner.public, x, SMALL).respond(holder.encrypted_bits()))
        assert holder.result is (x > y)
    assert tested == [SMALL, SMALL]


def test_several_comparisons_answered_together_decide_each_pair(owner):
    from mpdp.cryptocore.comparison.parallel import ComparisonJob, answer_all

    holders, jobs, expected = [], [], []
    for x, y, reverse in ((1234, 50000, False), (50000, 1234, False), (7, 9, True)):
        holder = ComparisonKeyHolder(owner, y, SMALL)
        holders.append(holder)
        jobs.append(ComparisonJob(x, SMALL, reverse, holder.encrypted_bits()))
        expected.append(y > x if reverse else x > y)
    answers = answer_all(owner.public, jobs)
    assert [h.receive(a) for h, a in zip(holders, answers)] == expected
    firsts = [Ciphertext.from_bytes(data).a for answer in answers for data in answer.ciphertexts]
    assert len(set(firsts)) == len(firsts)  # fresh randomness everywhere


def test_prepared_bit_encryptions_are_used_once_and_their_proofs_verify(owner):
    """Charlie prepares a tournament's encrypted bits and proof material while idle. A reused item would reuse
    s (linking ciphertexts) and the mask w (two responses for one commitment give s, hence the bit)."""
    import time

    elgamal_bit_proof._pools.pop(owner.public.key_id, None)
    elgamal_bit_proof.prepare_while_idle(owner.public, 6)
    deadline = time.monotonic() + 30
    while len(elgamal_bit_proof._pools[owner.public.key_id]) < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    prepared = list(elgamal_bit_proof._pools[owner.public.key_id])
    made = [elgamal_bit_proof.encrypt_and_prove(owner.public, bit, b"ctx") for bit in (0, 1, 1, 0, 1, 0, 1, 1)]
    assert len(elgamal_bit_proof._pools[owner.public.key_id]) == 0
    assert [c.a for c, _ in made[:6]] == [item.g_s for item in prepared]  # the prepared ones first, in order
    assert len({c.a for c, _ in made}) == 8 and len({p.responses for _, p in made}) == 8
    for (ciphertext, proof), bit in zip(made, (0, 1, 1, 0, 1, 0, 1, 1)):
        elgamal_bit_proof.verify(owner.public, ciphertext, proof, b"ctx")
        assert (ciphertext.b == pow(ciphertext.a, owner.x, P)) == (bit == 0)


def test_the_key_holder_checks_an_answers_shapes_before_any_exponentiation(owner, monkeypatch):
    from mpdp.cryptocore.comparison import protocol as comparison

    holder = ComparisonKeyHolder(owner, 5, SMALL)
    answer = ComparisonValueHolder(owner.public, 7, SMALL).respond(holder.encrypted_bits())
    monkeypatch.setattr(comparison, "all_members", lambda values: pytest.fail("exponentiated before the cheap checks"))
    for ciphertexts in (answer.ciphertexts[:-1], answer.ciphertexts[:-1] + (P.to_bytes(256, "big") * 2,)):
        with pytest.raises(CryptoError):
            holder.receive(dataclasses.replace(answer, ciphertexts=ciphertexts))
    monkeypatch.undo()
    assert holder.result is None and holder.receive(answer) is True
