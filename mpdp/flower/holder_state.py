"""A key-generation holder kept between Flower messages. Flower keeps a node's state in its Context, which is
serialised (the simulation engine may run the node's next message in another process), so the holder is
pickled into it. Its transcript is a running SHA-256, which does not pickle: `ReplayedTranscript` keeps what
it absorbed and absorbs it again on unpickling, reaching the same digest."""

from __future__ import annotations

import copy
import pickle

from mpdp.cryptocore.dkg.holder import Holder
from mpdp.cryptocore.dkg.transcript import Transcript


class ReplayedTranscript(Transcript):
    def __init__(self, bits: int, holders: int, threshold: int):
        super().__init__(bits, holders, threshold)
        self._parameters = (bits, holders, threshold)
        self._absorbed: list[tuple[str, list[int]]] = []

    def absorb(self, label: str, values) -> None:
        values = [int(v) for v in values]
        self._absorbed.append((label, values))
        super().absorb(label, values)

    def __getstate__(self) -> dict:
        return {"parameters": self._parameters, "absorbed": self._absorbed}

    def __setstate__(self, state: dict) -> None:
        ReplayedTranscript.__init__(self, *state["parameters"])
        for label, values in state["absorbed"]:
            self.absorb(label, values)

    def __deepcopy__(self, memo) -> "ReplayedTranscript":
        return copy.copy(self)  # __reduce_ex__ goes through the state above: an independent digest

    def __copy__(self) -> "ReplayedTranscript":
        twin = ReplayedTranscript.__new__(ReplayedTranscript)
        twin.__setstate__(self.__getstate__())
        return twin


def new_holder(index: int, holders: int, threshold: int, bits: int) -> Holder:
    holder = Holder(index, holders, threshold, bits)
    # Nothing is absorbed before the first broadcasts: the replayable transcript takes over from the start.
    holder._transcript = ReplayedTranscript(bits, holders, threshold)
    return holder


def dump(holder: Holder) -> bytes:
    return pickle.dumps(holder)


def load(blob: bytes) -> Holder:
    """Only ever this node's own state, from its own Context (never from a message)."""
    return pickle.loads(blob)
