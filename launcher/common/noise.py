"""Before any cryptography: the expected noise of a release against the signal it perturbs, from public
quantities only (ε, λ, d, K, C, the party sizes the operator chose), with the fix when the noise swamps the model.

Signal: a λ-regularised logistic (C = 2) or softmax model on rows in the unit ball has ‖w‖ ≤ √(2·ln C/λ): its
objective at w = 0 is ln C, the minimiser's is no larger, and the loss is non-negative, so λ/2‖w‖² ≤ ln C. The
bound reads no data. Output perturbation with L2 sensitivity Δ adds η with E‖η‖ = D·Δ/ε (l2-laplace: a
uniform direction, ‖η‖ ~ Gamma(D, Δ/ε)). What a prediction sees is η·x: on a unit row its standard deviation
is √(E‖η‖²/D) = √(D + 1)·Δ/ε, while the model's score w·x is at most ‖w‖. Hamm's check compares those two;
Pathak's compares the norms. Where the operator holds the parties' data, Hamm's reads the release's own scores
instead and Pathak's shows them beside (launcher/protocols/{hamm,pathak}/preview.py).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

NOISY = 1.0  # expected noise above the largest model the regulariser allows: one draw decides the result
TOO_NOISY = 3.0  # three times that: the release cannot learn
TARGET = 0.5  # the fix aims at noise half the model's bound


def weight_bound(regularization: float, classes: int = 2) -> float:
    """The largest ‖w‖ the regulariser allows a C-class logistic/softmax minimiser on unit-ball rows."""
    return math.sqrt(2 * math.log(max(2, classes)) / regularization)


def score_noise(weights: int, sensitivity: float, epsilon: float) -> float:
    """Standard deviation of η·x on a unit row x for l2-laplace noise on D weights: E‖η‖² = D(D + 1)(Δ/ε)²,
    spread evenly over the D directions."""
    return math.sqrt(weights + 1) * sensitivity / epsilon


def dimension(client_data: dict) -> int:
    return int(client_data["test_features"].shape[1])


def party_sizes(client_data: dict) -> list[int]:
    sizes = client_data.get("party_sizes")
    return [int(v) for v in np.atleast_1d(sizes)] if sizes is not None else []


def judged(what: str, noise: float, signal: float, formula: str, fix: str, parties: int,
           signal_name: str = "the largest model the regulariser allows", short: str = "model bound",
           noise_name: str = "expected ‖noise‖") -> dict:
    ratio = noise / signal
    result: dict = {"release": what, "noise": noise, "noise_name": noise_name, "signal_bound": signal,
                    "ratio": ratio, "signal": short, "formula": formula, "parties": parties, "warnings": []}
    if ratio > NOISY:
        verdict = ("it cannot learn" if ratio > TOO_NOISY else
                   "one noise draw decides the result (`--repeat R` shows the spread)")
        result["warnings"].append(f"{what}: at M = {parties} the {noise_name} is {ratio:.3g}× {signal_name} "
                                  f"({formula}); {verdict}: {fix}")
    return result


def files_key(files: list[Path]) -> tuple:
    """What a cache of data read from `files` is kept under: their paths, inodes and modification times, so that
    a deployment remade at the same paths in one process (the Python API, tests) is read anew."""
    return tuple((str(path), found.st_ino, found.st_mtime_ns) for path in files for found in (path.stat(),))


def _data_files(topology) -> list[Path] | None:
    files = [Path(entry.data) for entry in topology.parties if entry.data is not None]
    return files if files and len(files) == len(topology.parties) and all(f.is_file() for f in files) else None


def parts(topology) -> list[tuple[np.ndarray, np.ndarray]] | None:
    from mpdp.learning.datasets import load_part

    files = _data_files(topology)
    return [load_part(f)[:2] for f in files] if files else None
