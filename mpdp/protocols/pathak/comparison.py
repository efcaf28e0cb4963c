"""Stage 1 step 6 on short values: the tournament's secure comparisons on M + 1 = 33 + κ bits instead of
ℓ = 35 + κ + 2σ (docs/protocols/pathak-short-comparison.md). Pure arithmetic, free of gRPC and of roles.

The leader holds x = ã_i − ã_m and Charlie y = b̃_m − b̃_i; only z = x − y = n′_i − n′_m matters, and
|z| < 2^M with M = 32 + κ. The leader sends Charlie, once, w_k = ã_k + ρ_k for every k with ρ_k uniform in
[0, 2^(M+1+σ)): then Charlie holds d = z + 2^M + ρ′ (ρ′ = ρ_i − ρ_m + 2^R, known to the leader), so with
e = z + 2^M ∈ (0, 2^(M+1)):  n′_i > n′_m ⇔ bit M of e = 1 ⇔ d_M ⊕ ρ′_M ⊕ [d mod 2^M < ρ′ mod 2^M] = 1.
The bracket is a DGK comparison of X = 2·(ρ′ mod 2^M) (leader) and Y = 2·(d mod 2^M) + 1 (Charlie) — never
equal — whose direction the leader flips with a secret coin δ; the leader sends h = ρ′_M ⊕ δ beside it.
Charlie learns t = [X > Y] ⊕ δ and h, whose XOR is ρ′_M ⊕ borrow = e_M ⊕ d_M: the result and nothing
else, since each n′_k + ρ_k he can form hides n′_k statistically (σ bits)."""

from __future__ import annotations

import secrets

from mpdp.protocols.pathak.parameters import PathakParameters


def draw_offsets(parameters: PathakParameters) -> list[int]:
    """The leader's ρ_1..ρ_K, uniform in [0, 2^R)."""
    return [secrets.randbelow(2**parameters.offset_bits) for _ in range(parameters.parties)]


def _shifted(parameters: PathakParameters, value: int) -> tuple[int, int]:
    """(value mod 2^M, bit M of value) for a non-negative value."""
    assert value >= 0, "the offsets keep every operand non-negative"
    m = parameters.difference_bits
    return value % 2**m, (value >> m) & 1


def leader_operand(parameters: PathakParameters, offsets: list[int], i: int, m: int) -> tuple[int, int]:
    """(X, ρ′_M) for the pair (i, m): X = 2·(ρ′ mod 2^M) is the leader's DGK input."""
    low, bit = _shifted(parameters, offsets[i - 1] - offsets[m - 1] + 2**parameters.offset_bits)
    return 2 * low, bit


def charlie_operand(parameters: PathakParameters, masked: list[int], blinded_b: list[int], i: int,
                    m: int) -> tuple[int, int]:
    """(Y, d_M) for the pair (i, m): Y = 2·(d mod 2^M) + 1 is Charlie's DGK input."""
    y = blinded_b[m - 1] - blinded_b[i - 1]
    d = masked[i - 1] - masked[m - 1] - y + 2**parameters.difference_bits + 2**parameters.offset_bits
    low, bit = _shifted(parameters, d)
    return 2 * low + 1, bit


def bigger_first(charlie_bit: int, hint: int, flipped_result: bool) -> bool:
    """n′_i > n′_m from Charlie's d_M, the leader's h = ρ′_M ⊕ δ and the DGK output t = [X > Y] ⊕ δ."""
    return bool(charlie_bit ^ hint ^ int(flipped_result))


def context(session_id: str, i: int, m: int) -> bytes:
    """What the bit proofs of the comparison of pair (i, m) in a session are bound to."""
    return f"pathak/compare/{session_id}/{i}/{m}".encode()
