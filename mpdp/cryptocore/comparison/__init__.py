"""The secure comparison: its group, exponential ElGamal, the bit proof, the two roles and their parallel answers."""
