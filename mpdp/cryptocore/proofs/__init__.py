"""Zero-knowledge proofs on Paillier ciphertexts (bits, membership, products, ranges, openings) and on moduli (Π^mod, Π^fac, Π^prm)."""
