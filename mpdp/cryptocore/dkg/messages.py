"""What key holders send each other: one message per stage per recipient, a tuple of integers.

A message to recipient 0 is a broadcast (the same values to every holder). The values are
meaningful only for the stage and attempt they name; a holder refuses anything else.
"""

from __future__ import annotations

from dataclasses import dataclass

BROADCAST = 0

# The stages, in order (docs/distributed-keygen.md, "Construction"). An attempt (one batch of
# candidates) runs SIEVE → SIEVE_RESHARE (once per multiplication level but the last) → CANDIDATES →
# PRODUCTS → SIEVED → BIPRIMALITY; a failed batch starts the next attempt. The stages from INVERSE on run once, on the accepted modulus.
SIEVE = "sieve"  # private: Shamir shares mod M of each candidate's multiplicative shares a_i (sieve.py)
SIEVE_RESHARE = "sieve-reshare"  # private: degree reduction of one multiplication level's products
CANDIDATES = "candidates"  # private: BGW shares of each candidate's p_i, q_i and of zero
PRODUCTS = "products"  # broadcast: each candidate's product point N(j)
SIEVED = "sieved"  # broadcast: one Boneh–Franklin test value per candidate left after trial division
BIPRIMALITY = "biprimality"  # broadcast: the remaining repetitions for one candidate
INVERSE = "inverse"  # private: BGW shares mod n of φ_i, β_i, p_i + q_i (− 1), r_i and two zeros
INVERSE_PRODUCTS = "inverse-products"  # broadcast: points of θ = φ·β and ζ = r·(p + q − 1) mod n
EXPONENT = "exponent"  # private: BGW shares mod n²·F of φ_i, U_i and zero
EXPONENT_WRAP = "exponent-wrap"  # broadcast: top bits of each additive share of φ·U
KEY_SHARES = "key-shares"  # private g_j(i), broadcast Feldman commitments
CONFIRMATION = "confirmation"  # broadcast: v_i and a proven partial decryption of a test ciphertext
ACKNOWLEDGEMENT = "acknowledgement"  # broadcast: the digest of the transcript and public key this holder accepted

# (broadcast?, private?): what every other holder sends in each stage.
EXPECTS = {SIEVE: (False, True), SIEVE_RESHARE: (False, True), CANDIDATES: (False, True), PRODUCTS: (True, False), SIEVED: (True, False), BIPRIMALITY: (True, False),
           INVERSE: (False, True), INVERSE_PRODUCTS: (True, False), EXPONENT: (False, True),
           EXPONENT_WRAP: (True, False), KEY_SHARES: (True, True), CONFIRMATION: (True, False),
           ACKNOWLEDGEMENT: (True, False)}

STAGES = (SIEVE, SIEVE_RESHARE, CANDIDATES, PRODUCTS, SIEVED, BIPRIMALITY, INVERSE, INVERSE_PRODUCTS, EXPONENT, EXPONENT_WRAP,
          KEY_SHARES, CONFIRMATION, ACKNOWLEDGEMENT)


@dataclass(frozen=True)
class Message:
    stage: str
    attempt: int
    round: int  # counts every stage a holder has entered: BIPRIMALITY may repeat within one attempt
    sender: int
    recipient: int  # BROADCAST or a holder index
    values: tuple[int, ...]

    @property
    def size(self) -> int:
        """Bytes of the values as sent (big-endian, no padding)."""
        return sum((int(v).bit_length() + 8) // 8 for v in self.values)
