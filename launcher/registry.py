"""The protocols the launcher can run: one line per protocol, in the demo's order."""

from __future__ import annotations

from launcher import dppp_commands, du_commands, hamm_commands, pathak_commands
from launcher.protocol import LauncherProtocol

PROTOCOLS: dict[str, LauncherProtocol] = {p.name: p for p in (
    dppp_commands.PROTOCOL,
    pathak_commands.PROTOCOL,
    hamm_commands.PROTOCOL,
    du_commands.PROTOCOL,
)}
