"""Switching a running role's observe interceptors off and on: SIGUSR2 off, SIGUSR1 on (docs/observe.md).

A role installs its interceptors when its server starts and cannot remove them, so "off" is a flag each
interceptor reads first on every call: off, it hands the call on untouched (no span, no count, no envelope read);
the exporters stay up (the batch processor's thread, the OTLP channel, the /metrics listener) with nothing to
export. A signal is the control because only the account that started the role (or root) can send it: no port,
nothing on the network. The state is exported as the `mpdp_observe_on` gauge, so an operator sees it took."""

from __future__ import annotations

import signal
import threading

ON_SIGNAL = signal.SIGUSR1
OFF_SIGNAL = signal.SIGUSR2


class Switch:
    """One bool, read by every observe interceptor of a process on every call."""

    __slots__ = ("on",)

    def __init__(self, on: bool = True):
        self.on = on


SWITCH = Switch()  # the process's: one role per process, its interceptors all read this one


def listen(switch: Switch = SWITCH) -> bool:
    """SIGUSR1 switches `switch` on, SIGUSR2 off, from now on; False (nothing installed) off the main thread, where
    Python cannot take signals. The handler only stores a bool: safe at any point of the interrupted code."""
    if threading.current_thread() is not threading.main_thread():
        return False

    def switched(signum, _frame) -> None:
        switch.on = signum == ON_SIGNAL

    signal.signal(ON_SIGNAL, switched)
    signal.signal(OFF_SIGNAL, switched)
    return True
