"""Exponentiations that share one exponent and modulus, split over this process's cores.

gmpy2's list form (`powmod_base_list`) releases the GIL while it works, so plain threads run the chunks in
parallel: no worker processes, nothing pickled. Used where a role raises many values to one power on its
critical path (a key owner's zero tests, the Π^mod check's n-th powers).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import gmpy2

_executor: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def threads() -> ThreadPoolExecutor:
    """This process's threads for GIL-free gmpy2 work, one per core."""
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="shared-exponent")
        return _executor


def powmod_all(bases: list[int], exponent: int, modulus: int) -> list[int]:
    """[b^exponent mod modulus for b in bases], in order."""
    cores = min(len(bases), os.cpu_count() or 1)
    if cores <= 1:
        return [int(value) for value in gmpy2.powmod_base_list(bases, exponent, modulus)]
    size = -(-len(bases) // cores)
    chunks = [bases[start:start + size] for start in range(0, len(bases), size)]
    results = threads().map(lambda chunk: gmpy2.powmod_base_list(chunk, exponent, modulus), chunks)
    return [int(value) for chunk in results for value in chunk]
