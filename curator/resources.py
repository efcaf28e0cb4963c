"""What Charlie brings to every protocol: its own Paillier key ζ (Pathak), the deployment's threshold
public key and committee (Hamm's counting), and its public auxiliary data X_aux (Hamm). ζ and X_aux may be
made on first use (mpdp/sessions/on_first_use.py): a curator that never runs Pathak never makes ζ."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mpdp.cryptocore.paillier.keypair import KeyPair
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.sessions.on_first_use import OnFirstUse
from mpdp.threshold_sum.binding import ContributionKeys


@dataclass
class CuratorResources:
    zeta: KeyPair | OnFirstUse[KeyPair] = field(repr=False)
    public_key: ThresholdPublicKey | None = None
    parties: list[int] = field(default_factory=list)
    key_holders: list[int] = field(default_factory=list)
    aux_features: np.ndarray | OnFirstUse[np.ndarray] | None = field(default=None, repr=False)
    test_mode: bool = False
    # Checks the parties' signatures on the contributions it combines (None: a plaintext deployment or twins).
    contribution_keys: ContributionKeys | None = field(default=None, repr=False)

    def charlies_key(self) -> KeyPair:
        """ζ, made now if this is its first use."""
        return self.zeta.get() if isinstance(self.zeta, OnFirstUse) else self.zeta

    def aux(self) -> np.ndarray | None:
        """X_aux, read now if this is its first use."""
        return self.aux_features.get() if isinstance(self.aux_features, OnFirstUse) else self.aux_features
