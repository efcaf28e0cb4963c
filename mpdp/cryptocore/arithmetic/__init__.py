"""Exponentiation and number theory the schemes share: fixed-base, multi-base and shared-exponent powers, roots modulo n, primes."""
