"""The context every batch proof is bound to: protocol, session and (for multi-round protocols) round."""

from __future__ import annotations


def proof_context(protocol: str, session_id: str, *round_path: int) -> bytes:
    """The ciphertexts' positions are bound by the batch coefficients' hash, so only the session (and round)
    needs naming here: a proof cannot be replayed into another session or round."""
    return "/".join([protocol, session_id, *map(str, round_path)]).encode()
