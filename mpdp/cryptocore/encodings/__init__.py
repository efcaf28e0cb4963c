"""Reals and signed small integers as Paillier plaintexts: fixed point and packed slots."""
