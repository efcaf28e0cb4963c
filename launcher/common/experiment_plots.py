"""What every experiment's plot shares: the majority-class line, drawn above the other lines in a style none
of them uses, so a method that does no better than always answering the commonest class shows as such."""

from __future__ import annotations

MAJORITY_STYLE = {"color": "crimson", "linestyle": (0, (8, 3)), "linewidth": 2.0, "alpha": 0.85, "zorder": 10}


def majority_line(axis, value: float, what: str = "accuracy") -> None:
    """A horizontal line at the majority class's accuracy (or error) on the axis, named in its legend."""
    axis.axhline(value, label=f"majority class ({what} {value:.3f})", **MAJORITY_STYLE)


def majority_accuracy(labels) -> float:
    import numpy as np

    counts = np.bincount(np.asarray(labels, dtype=int))
    return float(counts.max() / counts.sum())
