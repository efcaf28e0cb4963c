"""`mpdp serve ROLE`: build a role's servicer from the topology and serve it."""

from __future__ import annotations

import asyncio
import logging

from cryptocore import keyfiles
from wire.channels import DEFAULT_MAX_MESSAGE_BYTES, PeerChannels
from wire.faults import ClientFaultInterceptor, Fault, ServerFaultInterceptor
from wire.identity import AGGREGATOR, CURATOR, party
from wire.server import serve
from wire.topology import Topology
from wire.traffic import TrafficLog

log = logging.getLogger(__name__)


def _party(topology: Topology, number: int, traffic: TrafficLog, test_mode: bool, fault: str | None, limit: int,
           client_faults: tuple = ()):
    from learning import datasets, models
    from mpdp_proto.v1 import party_pb2_grpc
    from party.servicer import PartyConfig, PartyServicer

    me = party(number)
    entry = topology.entry(me)
    public_key = keyfiles.load_public_key(topology.public_key)
    key_share = keyfiles.load_key_share(entry.key_share) if entry.key_share else None
    if key_share is not None and (key_share.public != public_key or key_share.index != number):
        raise ValueError(f"key share file {entry.key_share} does not belong to {me} under this public key")
    if entry.data is None:
        raise ValueError(f"{me} has no data file in the topology")
    features, labels, _ = datasets.load_part(entry.data)
    model = models.train(entry.model or models.DEFAULT_TEACHER_MODEL, features, labels)
    log.info("%s trained %s on %d rows", me, entry.model or models.DEFAULT_TEACHER_MODEL, len(labels))
    config = PartyConfig(number, public_key, key_share, model, features, labels, test_mode, fault)
    servicer = PartyServicer(config, PeerChannels(me, topology.addresses, traffic, topology.tls_for(me), limit,
                                                  client_faults), traffic)
    return me, entry, (lambda server: party_pb2_grpc.add_PartyServicer_to_server(servicer, server)), "mpdp.v1.Party", servicer.close


def _aggregator(topology: Topology, traffic: TrafficLog, limit: int, client_faults: tuple = ()):
    from aggregator.servicer import AggregatorServicer
    from mpdp_proto.v1 import aggregator_pb2_grpc

    public_key = keyfiles.load_public_key(topology.public_key)
    key_holders = topology.key_holders
    if key_holders != list(range(1, public_key.holders + 1)):
        raise ValueError(f"the topology's key holders {key_holders} do not match the key's {public_key.holders} holders")
    teachers = [entry.identity.id for entry in topology.parties]
    peers = PeerChannels(AGGREGATOR, topology.addresses, traffic, topology.tls_for(AGGREGATOR), limit, client_faults)
    servicer = AggregatorServicer(public_key, teachers, key_holders, peers, traffic)
    entry = topology.entry(AGGREGATOR)
    return AGGREGATOR, entry, (lambda server: aggregator_pb2_grpc.add_AggregatorServicer_to_server(servicer, server)), "mpdp.v1.Aggregator", peers.close


def _curator(topology: Topology, traffic: TrafficLog, limit: int, client_faults: tuple = ()):
    from cryptocore.paillier import generate_keypair
    from curator.servicer import CuratorServicer
    from mpdp_proto.v1 import curator_pb2_grpc

    # ζ, Charlie's own Paillier key, at the deployment's key size.
    zeta = generate_keypair(keyfiles.load_public_key(topology.public_key).n.bit_length())
    servicer = CuratorServicer(zeta, PeerChannels(CURATOR, topology.addresses, traffic, topology.tls_for(CURATOR), limit,
                                                  client_faults), traffic)
    entry = topology.entry(CURATOR)
    return CURATOR, entry, (lambda server: curator_pb2_grpc.add_CuratorServicer_to_server(servicer, server)), "mpdp.v1.Curator", servicer.close


def run(role: str, topology_path, number: int = 0, test_mode: bool = False, fault: str | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, insecure: bool = False) -> None:
    topology = Topology.load(topology_path)
    if topology.insecure != insecure:
        raise ValueError("a plaintext topology needs `--insecure` on the command line, and `--insecure` "
                         "needs a topology that declares `insecure = true`")
    traffic = TrafficLog()
    generic = Fault.parse(fault) if fault else None  # kill-on / stop-on / drop / delay: any role, test mode only
    if fault and not test_mode:
        raise ValueError("fault injection needs test mode")
    if fault and generic is None and role != "party":
        raise ValueError(f"unknown fault {fault!r} for the {role}")
    server_faults = (ServerFaultInterceptor(generic),) if generic and generic.kind in ("kill-on", "stop-on") else ()
    client_faults = (ClientFaultInterceptor(generic),) if generic and generic.kind in ("drop", "delay") else ()
    if role == "party":
        me, entry, add, name, on_stop = _party(topology, number, traffic, test_mode, None if generic else fault,
                                               max_message_bytes, client_faults)
    elif role == "aggregator":
        me, entry, add, name, on_stop = _aggregator(topology, traffic, max_message_bytes, client_faults)
    elif role == "curator":
        me, entry, add, name, on_stop = _curator(topology, traffic, max_message_bytes, client_faults)
    else:
        raise ValueError(f"unknown role {role!r}")
    asyncio.run(serve(me, entry.bind_address, add, name, traffic, topology.tls_for(me), on_stop, max_message_bytes,
                      server_faults))
