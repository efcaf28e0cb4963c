"""Where a party's Pathak noise comes from."""

from __future__ import annotations

import random


def noise_source(seed: int, party_number: int) -> random.Random:
    """CSPRNG, or (test mode) one independent seeded stream per party."""
    return random.Random(f"mpdp/pathak/noise/{seed}/{party_number}") if seed else random.SystemRandom()
