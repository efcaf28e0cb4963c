"""The smallest noise parameter that is private: bisection on a lattice, for every calibration that searches
(Binomial tosses, the Skellam grid). Privacy is monotone in the parameter (more noise adds independent noise)."""

from __future__ import annotations

from typing import Callable


def smallest_private(low: int, high: int, step: int, private: Callable[[int], bool]) -> int:
    """The smallest value of low + k·step in (low, high] for which `private` holds, given private(high) and not
    private(low)."""
    while high - low > step:
        middle = low + (high - low) // (2 * step) * step
        if private(middle):
            high = middle
        else:
            low = middle
    return high
