"""What one (logical) party brings to every protocol: its data, its teacher model, its key share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cryptocore.threshold import KeyShare, ThresholdPublicKey

FAULTS = ("tamper-partial-decryption",)  # protocol-level faults; transport faults are wire/faults.py's


@dataclass
class PartyResources:
    id: int
    public_key: ThresholdPublicKey
    # Private: never in a repr or a log line.
    key_share: KeyShare | None = field(repr=False)
    model: Any = field(repr=False)  # a fitted scikit-learn classifier (DPPP's teacher)
    features: np.ndarray = field(repr=False)  # the party's own data (Pathak trains on it per session)
    labels: np.ndarray = field(repr=False)
    test_mode: bool = False
    fault: str | None = None  # test mode only

    def __post_init__(self):
        if self.fault and not self.test_mode:
            raise ValueError("fault injection needs test mode")
        if self.fault and self.fault not in FAULTS:
            raise ValueError(f"unknown fault {self.fault!r}")
