"""A child process's lifetime bound to its parent's: the kernel signals the child when the parent dies
(PR_SET_PDEATHSIG, Linux), SIGKILL included, when no handler of the parent's runs to stop it. Called in the
child, before exec (`preexec_fn`) or first thing in a pool's worker."""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(signum: int = signal.SIGKILL, parent: int | None = None) -> None:
    """From now on this process gets `signum` when its parent dies. `parent`: the pid it was started by; if that
    one died before the call took effect (the child was re-parented already), exit at once."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os._exit(0)
