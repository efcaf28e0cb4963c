"""`mpdp bench crypto`: the cryptographic core's costs, measured in one run.

Ratios (fast vs phe encryption, packed vs unpacked) compare figures taken in
the same process on the same key, never against numbers from elsewhere.
"""

from __future__ import annotations

import platform
import statistics
import time
from typing import Any

from launcher.common.progress import progress
from mpdp.cryptocore.comparison.elgamal import ElGamalKeyPair
from mpdp.cryptocore.comparison.protocol import ComparisonKeyHolder, ComparisonValueHolder
from mpdp.cryptocore.encodings.packing import SlotLayout
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier.keypair import generate_keypair
from mpdp.cryptocore.paillier.threshold import SafePrimes, combine, deal, decrypt, verify

COMMITTEE = 16  # the default largest decryption committee (crypto.md, "Scale")
COMPARISON_BITS = 36  # Pathak's short comparison for K ≤ 8 (docs/protocols/pathak-short-comparison.md)
PACKED_VALUE_BITS = 10
PACKED_SUMMANDS = 16
KEYGEN_RUNS = 3



def _time_each(action, repeat: int) -> dict:
    """Seconds per call: mean, median, min and max over `repeat` calls."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return {"mean_s": statistics.fmean(samples), "median_s": statistics.median(samples), "min_s": min(samples),
            "max_s": max(samples), "runs": repeat}


def _time_once(action):
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


def _encryption(keypair, repeat: int) -> dict:
    paillier, encryptor = keypair.public.paillier, keypair.public.encryptor
    _, table_s = _time_once(encryptor.precompute)
    phe_raw = _time_each(lambda: paillier.raw_encrypt(12345), repeat)
    phe_api = _time_each(lambda: paillier.encrypt(12345), repeat)
    fast = _time_each(lambda: encryptor.encrypt(12345), repeat * 10)
    ciphertext = encryptor.encrypt(12345)
    rerandomise = _time_each(lambda: encryptor.rerandomise(ciphertext), repeat * 10)
    decryption = _time_each(lambda: keypair.private.raw_decrypt(ciphertext), repeat)
    return {
        "fixed_base_table_build_s": table_s,
        "phe_raw_encrypt": phe_raw,
        "phe_encrypt": phe_api,
        "fast_encrypt": fast,
        "fast_vs_phe_raw_encrypt_ratio": phe_raw["mean_s"] / fast["mean_s"],
        "fast_vs_phe_encrypt_ratio": phe_api["mean_s"] / fast["mean_s"],
        "rerandomise": rerandomise,
        "decrypt_crt": decryption,
    }


def _threshold(primes: SafePrimes, repeat: int) -> dict:
    results: dict[str, Any] = {"committee_size": COMMITTEE}
    for threshold in (3, 11):
        progress(f"threshold key t={threshold}, ℓ={COMMITTEE}: dealing and decrypting")
        public, shares = deal(primes, threshold, COMMITTEE)
        ciphertext = public.encryptor.encrypt(-424242)
        context = b"bench"
        partials = [share.partial_decrypt(ciphertext, context) for share in shares[:threshold]]
        plaintext, rejected = decrypt(public, ciphertext, partials, context)
        assert plaintext == -424242 and not rejected
        entry = {"combine": _time_each(lambda: combine(public, partials), repeat)}
        if threshold == 3:
            entry["partial_decrypt_without_proof"] = _time_each(lambda: shares[0].decryption_share(ciphertext), repeat)
            entry["partial_decrypt_with_proof"] = _time_each(lambda: shares[0].partial_decrypt(ciphertext, context), repeat)
            entry["verify_proof"] = _time_each(lambda: verify(public, ciphertext, partials[0], context), repeat)
        entry["verify_and_combine_t_shares"] = _time_each(lambda: decrypt(public, ciphertext, partials, context), max(1, repeat // 4))
        results[f"t={threshold}"] = entry
    return results


def _packing(keypair) -> dict:
    paillier, encryptor = keypair.public.paillier, keypair.public.encryptor
    layout = SlotLayout.for_modulus(paillier.n, PACKED_VALUE_BITS, PACKED_SUMMANDS)
    count = layout.slots_per_plaintext * 4
    values = [(index * 37) % 1023 - 511 for index in range(count)]
    summed = [PACKED_SUMMANDS * value for value in values]

    def packed_round():
        ciphertexts = [encryptor.encrypt(plaintext) for plaintext in layout.pack(values)]
        total = [ct.scalar_multiply(paillier, c, PACKED_SUMMANDS) for c in ciphertexts]  # m identical summands
        return layout.unpack([keypair.private.raw_decrypt(c) for c in total], count)

    def unpacked_round():
        ciphertexts = [encryptor.encrypt(value) for value in values]
        total = [ct.scalar_multiply(paillier, c, PACKED_SUMMANDS) for c in ciphertexts]
        return [ct.decode_signed(paillier, keypair.private.raw_decrypt(c)) for c in total]

    packed_result, packed_s = _time_once(packed_round)
    unpacked_result, unpacked_s = _time_once(unpacked_round)
    assert packed_result == summed == unpacked_result
    bytes_per_ciphertext = ct.ciphertext_length(paillier)
    return {
        "value_bits": PACKED_VALUE_BITS,
        "summands": PACKED_SUMMANDS,
        "slot_bits": layout.slot_bits,
        "slots_per_ciphertext": layout.slots_per_plaintext,
        "values": count,
        "packed_values_per_s": count / packed_s,
        "unpacked_values_per_s": count / unpacked_s,
        "packed_vs_unpacked_throughput_ratio": unpacked_s / packed_s,
        "packed_bytes_per_value": bytes_per_ciphertext * layout.plaintexts_needed(count) / count,
        "unpacked_bytes_per_value": bytes_per_ciphertext,
        "what": "encrypt, scale by m (as m summands), decrypt and unpack, per value",
    }


def _comparison(keypair: ElGamalKeyPair) -> dict:
    """Under the comparison key (exponential ElGamal in the 2048-bit group, mpdp/cryptocore/comparison/elgamal.py)."""
    x, y = (1 << (COMPARISON_BITS - 1)) + 12345, (1 << (COMPARISON_BITS - 1)) + 12344
    key_holder = ComparisonKeyHolder(keypair, y, COMPARISON_BITS)
    value_holder = ComparisonValueHolder(keypair.public, x, COMPARISON_BITS)
    first, step1_s = _time_once(key_holder.encrypted_bits)
    second, step2_s = _time_once(lambda: value_holder.respond(first))
    result, step3_s = _time_once(lambda: key_holder.receive(second))
    assert result is True
    return {
        "bits": COMPARISON_BITS,
        "total_s": step1_s + step2_s + step3_s,
        "step1_encrypt_bits_s": step1_s,
        "step2_blind_s": step2_s,
        "step3_zero_test_s": step3_s,
        "bytes_on_wire": sum(map(len, first.ciphertexts + first.proofs + second.ciphertexts)),
    }


def run(bits: int, repeat: int) -> dict:
    progress(f"plain Paillier key, {bits} bits")
    keypair, plain_keygen_s = _time_once(lambda: generate_keypair(bits))
    progress("encryption and decryption")
    encryption = _encryption(keypair, repeat)
    progress(f"threshold key generation (two {bits // 2}-bit safe primes), {KEYGEN_RUNS} runs")
    generated = []
    threshold_keygen = _time_each(lambda: generated.append(SafePrimes.generate(bits)), KEYGEN_RUNS)
    primes = generated[-1]
    threshold = _threshold(primes, repeat)
    progress("packed vs unpacked 10-bit values")
    packing = _packing(keypair)
    progress(f"one {COMPARISON_BITS}-bit secure comparison")
    comparison = _comparison(ElGamalKeyPair.generate())
    return {
        "benchmark": "crypto",
        "key_bits": bits,
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "processor": platform.processor()},
        "keygen": {"plain_paillier_s": plain_keygen_s, "threshold_safe_primes": threshold_keygen},
        "encryption": encryption,
        "threshold": threshold,
        "packing": packing,
        "comparison": comparison,
    }


def _ms(entry: dict) -> str:
    return f"{entry['mean_s'] * 1e3:10.2f} ms"


def summary(report: dict) -> str:
    enc, thr, pack, cmp_ = report["encryption"], report["threshold"], report["packing"], report["comparison"]
    keygen = report["keygen"]["threshold_safe_primes"]
    rows = [
        ("threshold key generation (safe primes)", f"{keygen['mean_s']:10.2f} s  (max {keygen['max_s']:.2f} s of {keygen['runs']})"),
        ("plain key generation (Blum primes)", f"{report['keygen']['plain_paillier_s']:10.2f} s"),
        ("phe raw_encrypt", _ms(enc["phe_raw_encrypt"])),
        ("phe encrypt (public API)", _ms(enc["phe_encrypt"])),
        ("fast encrypt (DJN, fixed-base table)", _ms(enc["fast_encrypt"])),
        ("fast vs phe raw_encrypt", f"{enc['fast_vs_phe_raw_encrypt_ratio']:10.1f} ×"),
        ("fast vs phe encrypt", f"{enc['fast_vs_phe_encrypt_ratio']:10.1f} ×"),
        ("re-randomise", _ms(enc["rerandomise"])),
        ("decrypt (CRT)", _ms(enc["decrypt_crt"])),
        (f"partial decrypt, no proof (ℓ={thr['committee_size']})", _ms(thr["t=3"]["partial_decrypt_without_proof"])),
        ("partial decrypt with proof", _ms(thr["t=3"]["partial_decrypt_with_proof"])),
        ("verify proof", _ms(thr["t=3"]["verify_proof"])),
        ("combine t=3", _ms(thr["t=3"]["combine"])),
        ("combine t=11", _ms(thr["t=11"]["combine"])),
        ("verify + combine t=3", _ms(thr["t=3"]["verify_and_combine_t_shares"])),
        ("verify + combine t=11", _ms(thr["t=11"]["verify_and_combine_t_shares"])),
        (f"packed 10-bit values (m={pack['summands']})", f"{pack['packed_values_per_s']:10.0f} /s  ({pack['slots_per_ciphertext']} slots of {pack['slot_bits']} bits)"),
        ("unpacked 10-bit values", f"{pack['unpacked_values_per_s']:10.0f} /s"),
        ("packed vs unpacked throughput", f"{pack['packed_vs_unpacked_throughput_ratio']:10.1f} ×"),
        (f"secure comparison ℓ={cmp_['bits']}", f"{cmp_['total_s'] * 1e3:10.2f} ms  ({cmp_['bytes_on_wire']} bytes on the wire)"),
    ]
    width = max(len(label) for label, _ in rows)
    return "\n".join([f"crypto benchmark, {report['key_bits']}-bit keys"] + [f"  {label:<{width}}  {value}" for label, value in rows])
