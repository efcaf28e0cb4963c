"""The protocols the launcher can run: one line per protocol, in the demo's order."""

from __future__ import annotations

from launcher.protocol import LauncherProtocol
from launcher.protocols.dppp import commands as dppp_commands
from launcher.protocols.du import commands as du_commands
from launcher.protocols.hamm import commands as hamm_commands
from launcher.protocols.pathak import commands as pathak_commands

PROTOCOLS: dict[str, LauncherProtocol] = {p.name: p for p in (
    dppp_commands.PROTOCOL,
    pathak_commands.PROTOCOL,
    hamm_commands.PROTOCOL,
    du_commands.PROTOCOL,
)}
