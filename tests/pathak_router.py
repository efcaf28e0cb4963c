"""Pathak over the in-process twin of the network (mpdp.wire.twin), with the roles' real registries."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np

from curator.registry import protocols as curator_protocols
from curator.resources import CuratorResources
from mpdp.proto.v1 import common_pb2
from mpdp.protocols.pathak import ring
from mpdp.sessions.identity import CLIENT, CURATOR, party
from mpdp.wire.twin import InProcessNetwork
from party.registry import protocols as party_protocols
from party.resources import PartyResources


def network(parameters, parts, zeta, rng: random.Random, session_id: str = "s") -> InProcessNetwork:
    """Every participant opened (as the client does, before anyone starts); nothing started yet."""
    key = SimpleNamespace(n=zeta.public.n)  # Pathak reads the deployment's key size from it
    resources = {party(j): PartyResources(j, key, None, None, x, y, test_mode=True)  # type: ignore[arg-type]
                 for j, (x, y) in enumerate(parts, start=1)}
    registries = {identity: party_protocols(resources.__getitem__) for identity in resources}
    registries[CURATOR] = curator_protocols(CuratorResources(zeta))
    net = InProcessNetwork(session_id, registries, rng)
    for identity in registries:
        net.send(CLIENT, identity, "pathak", "open", parameters.to_proto())
    net.run()
    assert not net.refused, net.refused
    return net


def run(parameters, parts, zeta, rng: random.Random, stop_when=None):
    """Returns (parties, curator); `stop_when(curator)` ends the run early."""
    net = network(parameters, parts, zeta, rng)
    for identity in list(net.registries):
        net.send(CLIENT, identity, "pathak", "start", common_pb2.Empty())
    net.run(None if stop_when is None else (lambda n: stop_when(n.sides[CURATOR])))
    parties = {identity: side for identity, side in net.sides.items() if identity.role == "party"}
    return dict(sorted(parties.items())), net.sides[CURATOR]


def reconstruct(machines, parameters) -> np.ndarray:
    total = ring.decode_signed(ring.add([m.published for m in machines]))
    return np.array(total, dtype=float) / 2**parameters.fractional_bits / parameters.parties
