"""Benchmarks shared by every protocol (`mpdp bench …`) and the hardening attacks."""
