"""mpdp: differentially private learning across parties, over real cryptography and real processes.

The Python API for notebooks (`mpdp.deploy`, `mpdp.Deployment`, `mpdp.Report`) is in `mpdp.api`, loaded on first
use: importing a lower layer (`mpdp.cryptocore`, `mpdp.sessions`, …) runs this file and so loads no launcher."""

from typing import TYPE_CHECKING, Any

__all__ = ["Deployment", "Report", "deploy"]

if TYPE_CHECKING:
    from mpdp.api import Deployment, Report, deploy


def __getattr__(name: str) -> Any:
    if name in __all__:
        from mpdp import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
