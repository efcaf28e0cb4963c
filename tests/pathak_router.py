"""Runs Pathak's state machines in one process: every message is serialised as
the wire would carry it and delivered in a random order (per-sender order kept)."""

from __future__ import annotations

import random
from collections import defaultdict, deque

import numpy as np

from curator.pathak_session import PathakCuratorSession
from mpdp_proto.v1 import common_pb2, pathak_pb2
from party.pathak_session import PathakPartySession
from pathak import ring
from wire.identity import CLIENT, CURATOR, party


def run(parameters, parts, zeta, rng: random.Random, stop_when=None):
    """Returns (parties, curator); `stop_when(curator)` ends the run early."""
    bits = zeta.public.n.bit_length()
    parties = {party(j): PathakPartySession("s", j, parameters, x, y, bits, test_mode=True)
               for j, (x, y) in enumerate(parts, start=1)}
    curator = PathakCuratorSession("s", parameters, zeta)
    machines = {**parties, CURATOR: curator}
    queues: dict[tuple, deque] = defaultdict(deque)  # (sender, receiver) → messages, in order

    def post(sender, outbound):
        for message in outbound:
            wire = pathak_pb2.PathakMessage(session_id="s", **{message.kind: message.body})
            queues[(sender, message.to)].append(wire.SerializeToString())

    for identity, machine in machines.items():
        post(identity, machine.receive(CLIENT, "start", common_pb2.Empty()))
    while any(queues.values()):
        if stop_when is not None and stop_when(curator):
            break
        sender, receiver = rng.choice([key for key, queue in queues.items() if queue])
        message = pathak_pb2.PathakMessage.FromString(queues[(sender, receiver)].popleft())
        kind = message.WhichOneof("body")
        post(receiver, machines[receiver].receive(sender, kind, getattr(message, kind)))
    return parties, curator


def reconstruct(machines, parameters) -> np.ndarray:
    total = ring.decode_signed(ring.add([m.published for m in machines]))
    return np.array(total, dtype=float) / 2**parameters.fractional_bits / parameters.parties
