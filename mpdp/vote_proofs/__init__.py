"""Proven one-hot votes beside packed noise shares (docs/malicious-party.md)."""
