"""The launcher's child processes and their ports: free ports for roles to listen on, whether a child still runs,
and stopping a set of them (every deployment and the key holders' ceremony start children)."""

from __future__ import annotations

import os
import random
import signal
import socket
import time
from pathlib import Path

STOP_TIMEOUT_S = 10.0


def _ephemeral_ports() -> range:
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    return range(low, high + 1)


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on, chosen outside the kernel's ephemeral range: a port from that range can be
    taken by some outgoing connection between this probe and the server's bind."""
    return free_ports(1, host)[0]


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """`count` different ports nobody listens on (as free_port): each probe stays bound until all are chosen, so
    no two roles of one deployment are given the same port."""
    ephemeral = _ephemeral_ports()
    rng = random.SystemRandom()
    probes: list[socket.socket] = []
    try:
        for _ in range(100 * count):
            if len(probes) == count:
                break
            port = rng.randrange(20000, 65536)
            if port in ephemeral:
                continue
            probe = socket.socket()
            try:
                probe.bind((host, port))
            except OSError:
                probe.close()
                continue
            probes.append(probe)
        while len(probes) < count:  # a crowded machine: let the kernel choose
            probe = socket.socket()
            probe.bind((host, 0))
            probes.append(probe)
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def _running(pid: int) -> bool:
    """Whether `pid` runs; a child of ours that exited (a zombie until reaped) is reaped and counts as dead."""
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)
        if reaped == pid:
            return False
    except ChildProcessError:  # not our child: ask the kernel
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop(processes: dict[str, int]) -> list[str]:
    """SIGTERM each process group (and SIGCONT: a stopped process takes its SIGTERM only once continued); SIGKILL
    what is left after a grace period."""
    for pid in processes.values():
        for signum in (signal.SIGTERM, signal.SIGCONT):
            try:
                os.killpg(pid, signum)
            except ProcessLookupError:
                pass
            except PermissionError:
                os.kill(pid, signum)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline and any(_running(pid) for pid in processes.values()):
        _reap(processes.values())
        time.sleep(0.1)
    for pid in processes.values():
        if _running(pid):
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    _reap(processes.values())
    return list(processes)


def _reap(pids) -> None:
    """Collect exited children of this process so they do not linger as zombies."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
