"""The Paillier scheme: plain and threshold key pairs, ciphertexts, fast encryption, prepared re-randomisers, key files."""
