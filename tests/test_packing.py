import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpdp.cryptocore.encodings.packing import SlotLayout
from mpdp.cryptocore.errors import EncodingOverflow
from mpdp.cryptocore.paillier import ciphertext as ct


@st.composite
def party_vectors(draw):
    """m parties' vectors of b-bit signed values, enough to need several plaintexts."""
    value_bits = draw(st.integers(min_value=2, max_value=24))
    summands = draw(st.integers(min_value=1, max_value=12))
    length = draw(st.integers(min_value=1, max_value=120))
    limit = (1 << (value_bits - 1)) - 1
    values = st.integers(min_value=-limit, max_value=limit)
    vectors = draw(st.lists(st.lists(values, min_size=length, max_size=length), min_size=summands, max_size=summands))
    return value_bits, vectors


@given(party_vectors())
def test_packed_sums_of_many_ciphertexts_unpack_to_elementwise_sums(keypair, case):
    value_bits, vectors = case
    paillier, encryptor = keypair.public.paillier, keypair.public.encryptor
    layout = SlotLayout.for_modulus(paillier.n, value_bits, len(vectors))
    encrypted = [[encryptor.encrypt(p) for p in layout.pack(vector)] for vector in vectors]
    summed = [ct.add(paillier, *column) for column in zip(*encrypted)]
    plaintexts = [keypair.private.raw_decrypt(c) for c in summed]
    assert layout.unpack(plaintexts, len(vectors[0])) == [sum(column) for column in zip(*vectors)]


@given(st.lists(st.integers(min_value=-511, max_value=511), min_size=1, max_size=300))
def test_round_trip_without_encryption(values):
    layout = SlotLayout(value_bits=10, summands=1, plaintext_bits=1022)
    assert layout.unpack(layout.pack(values), len(values)) == values


def test_extreme_values_do_not_carry_into_neighbours(keypair):
    layout = SlotLayout.for_modulus(keypair.public.n, 8, 5)
    worst = [127, -127] * (layout.slots_per_plaintext // 2 + 3)
    total = [sum(p) for p in zip(*[layout.pack(worst)] * 5)]
    assert layout.unpack(total, len(worst)) == [5 * v for v in worst]


@given(st.data())
def test_masked_slots_unmask_exactly(keypair, data):
    layout = SlotLayout.for_modulus(keypair.public.n, 12, 4, mask_bits=40)
    vectors = data.draw(st.lists(st.lists(st.integers(-2047, 2047), min_size=30, max_size=30), min_size=4, max_size=4))
    masks = layout.random_masks(30)
    assert all(0 <= mask < layout.mask_bound for mask in masks)
    encryptor, paillier = keypair.public.encryptor, keypair.public.paillier
    packed = [ct.add(paillier, *col) for col in zip(*[[encryptor.encrypt(p) for p in layout.pack(v)] for v in vectors])]
    masked = [ct.add_plain(paillier, c, mask) for c, mask in zip(packed, layout.pack_masks(masks))]
    revealed = layout.unpack([keypair.private.raw_decrypt(c) for c in masked], 30)
    assert [r - m for r, m in zip(revealed, masks)] == [sum(col) for col in zip(*vectors)]


def test_layout_widths():
    layout = SlotLayout(value_bits=10, summands=16, plaintext_bits=2046)
    assert layout.slot_bits == 14 and layout.slots_per_plaintext == 146 and layout.bias == 512
    masked = SlotLayout(value_bits=10, summands=16, plaintext_bits=2046, mask_bits=40)
    assert masked.slot_bits == 14 + 41 and masked.mask_bound == 1 << (14 - 1 + 40)
    assert SlotLayout(10, 17, 2046).slot_bits == 15


def test_value_that_does_not_fit_fails_loudly():
    layout = SlotLayout(value_bits=10, summands=2, plaintext_bits=1022)
    for bad in (512, -512, 10**6):
        with pytest.raises(EncodingOverflow):
            layout.pack([0, bad])


def test_headroom_checked_at_construction():
    with pytest.raises(EncodingOverflow):
        SlotLayout(value_bits=1000, summands=2**30, plaintext_bits=1022)


def test_unpack_rejects_inconsistent_input():
    layout = SlotLayout(value_bits=10, summands=2, plaintext_bits=1022)
    with pytest.raises(EncodingOverflow):
        layout.unpack([1, 2], 3)  # 3 values fit one plaintext
    with pytest.raises(EncodingOverflow):
        layout.unpack([1 << 1022], 3)
    masked = SlotLayout(value_bits=10, summands=2, plaintext_bits=1022, mask_bits=8)
    with pytest.raises(EncodingOverflow):
        masked.pack_masks([-1])
    with pytest.raises(EncodingOverflow):
        masked.pack_masks([masked.mask_bound])
