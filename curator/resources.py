"""What Charlie brings to every protocol: its own Paillier key ζ (Pathak), the deployment's threshold
public key and committee (Hamm's counting), and its public auxiliary data X_aux (Hamm)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cryptocore.paillier import KeyPair
from cryptocore.threshold import ThresholdPublicKey


@dataclass
class CuratorResources:
    zeta: KeyPair = field(repr=False)
    public_key: ThresholdPublicKey | None = None
    parties: list[int] = field(default_factory=list)
    key_holders: list[int] = field(default_factory=list)
    aux_features: np.ndarray | None = field(default=None, repr=False)
    test_mode: bool = False
