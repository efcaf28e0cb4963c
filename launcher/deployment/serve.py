"""`mpdp serve ROLE`: build a role's host from the topology and its protocol registry, and serve it."""

from __future__ import annotations

import asyncio
import logging

from mpdp.cryptocore.paillier import keyfiles
from mpdp.deployments.topology import Topology
from mpdp.privacy import accountant_process
from mpdp.privacy.ledger import DEFAULT_BUDGET, Budget
from mpdp.sessions.protocol import start_hosts
from mpdp.wire import memory
from mpdp.wire.channels import DEFAULT_MAX_MESSAGE_BYTES, PeerChannels
from mpdp.wire.faults import ClientFaultInterceptor, Fault, ServerFaultInterceptor
from mpdp.wire.host import RoleHost
from mpdp.wire.server import serve
from mpdp.wire.service import SERVICE_NAME, RoleServicer, RoleStatus
from mpdp.wire.traffic import TrafficLog

log = logging.getLogger(__name__)


def speaks_for(name: str, sender: int) -> bool:
    """A certificate named `name` may sign party `sender`'s contributions (its principal covers it)."""
    from mpdp.sessions.identity import party
    from mpdp.wire.identity import Principal

    try:
        return Principal.parse(name).covers(party(sender))
    except ValueError:
        return False


def contribution_keys(topology: Topology, me, signs: bool):
    """The role's signer of its threshold-sum contributions (its TLS key) and the verifier of everyone's
    (the deployment CA); None in a plaintext deployment (crypto.md, "Bound decryption")."""
    from mpdp.cryptocore.keys.contribution_signature import ContributionSigner, ContributionVerifier
    from mpdp.threshold_sum.binding import ContributionKeys

    tls = topology.tls_for(me)
    if tls is None:
        return None
    signer = ContributionSigner.from_files(tls.key, tls.certificate) if signs else None
    return ContributionKeys(ContributionVerifier.from_file(tls.ca), speaks_for, signer)


def _party_resources(topology: Topology, me, public_key, teachers, test_mode: bool, fault: str | None,
                     budget: Budget, allow_unproven: bool):
    from mpdp.learning import datasets, models
    from mpdp.privacy.ledger import Ledger
    from party.resources import PartyResources

    entry = topology.entry(me)
    key_share = keyfiles.load_key_share(entry.key_share) if entry.key_share else None
    if key_share is not None and (key_share.public != public_key or key_share.index != me.id):
        raise ValueError(f"key share file {entry.key_share} does not belong to {me} under this public key")
    if entry.data is None:
        raise ValueError(f"{me} has no data file in the topology")
    ledger = Ledger(entry.data, me.id, budget)
    ledger.check_writable()  # missing, tampered with or unwritable: the party does not serve
    features, labels, classes = datasets.load_part(entry.data)
    model = teachers.add(me.id, entry.model or models.DEFAULT_TEACHER_MODEL, features, labels, classes)
    log.info("%s: privacy budget %s per data set%s", me, budget, "; unproven mechanisms allowed" if allow_unproven else "")
    return PartyResources(me.id, public_key, key_share, model, features, labels, test_mode, fault, ledger,
                          allow_unproven, contribution_keys(topology, me, signs=True), topology.colluding)


def _party_protocols(topology: Topology, number: int, test_mode: bool, fault: str | None, budget: Budget,
                     allow_unproven: bool):
    """The registry of a party host: every logical party its principal covers, each with its own resources;
    their teachers are trained together when a protocol first needs one (party/teachers.py)."""
    from mpdp.sessions.identity import party
    from party.registry import protocols
    from party.teachers import HostTeachers

    public_key = keyfiles.load_public_key(topology.public_key)
    hosted = topology.principal_of(party(number)).identities
    if any(me.id in topology.key_holders for me in hosted):
        check_quorums(topology, public_key)
    teachers = HostTeachers()
    own = {me: _party_resources(topology, me, public_key, teachers, test_mode, fault, budget, allow_unproven)
           for me in hosted}
    return protocols(own.__getitem__), public_key.key_id.hex()


def check_quorums(topology: Topology, public_key) -> None:
    """What a key holder can check of 2t > ℓ + c itself (mpdp.threshold_sum.quorums): t and ℓ from the key, c from
    its bundle's topology, which names every key holder and the process hosting it. Refused at start, before any
    request: a holder of a key whose quorums one principal could split would decrypt a second subset's sum."""
    from mpdp.sessions.identity import party
    from mpdp.threshold_sum import quorums

    if topology.key_holders != list(range(1, public_key.holders + 1)):
        raise ValueError(f"the topology's key holders {topology.key_holders} do not match the key's "
                         f"{public_key.holders} holders")
    colluding = 1 if topology.single_operator else quorums.most_shares(
        topology.principal_of(party(number)) for number in topology.key_holders)
    quorums.check(public_key.threshold, public_key.holders, colluding)


# `--once`: how long a holder keeps serving after it wrote its share (the client's commit), so that the client
# collects the commit's result or rolls it back (the result is handed out within mpdp.wire.host.SETTLE_WAIT_S)
ONCE_LINGER_S = 15.0


def _made_earlier(topology: Topology, number: int) -> bool:
    """A compose holder that runs again on a deployment whose key it already made: its share and the public key."""
    from mpdp.sessions.identity import party

    share = topology.entry(party(number)).key_share
    return share is not None and share.is_file() and topology.public_key.is_file()


def _keygen_protocols(topology: Topology, number: int, once: bool = False):
    """A key holder that serves only `keygen` (docs/distributed-keygen.md): no key yet; the share it makes is
    written to its topology entry's key_share file, which the launcher checked it may write. `once` (compose,
    where no launcher shares the holder's volume): the public key goes beside it, then the process exits."""
    import json
    import os
    import signal
    import threading

    from mpdp.cryptocore.keys import secret_files
    from mpdp.protocols.keygen.protocol import holder_protocol
    from mpdp.sessions.identity import party

    def store(me, share) -> None:
        path = topology.entry(me).key_share
        if path is None:
            raise ValueError(f"{me} holds no key share in this topology")
        secret_files.write_file(path, json.dumps(keyfiles.key_share_to_dict(share), indent=2).encode(), overwrite=True)
        if once:
            secret_files.write_file(topology.public_key,
                                    json.dumps(keyfiles.public_key_to_dict(share.public), indent=2).encode(),
                                    mode=secret_files.PUBLIC_MODE, overwrite=True)
            threading.Timer(ONCE_LINGER_S, os.kill, (os.getpid(), signal.SIGTERM)).start()

    def discard(me) -> None:
        """The client rolled the commit back (another holder refused its own): the share goes, and the public key
        beside it with `once`."""
        path = topology.entry(me).key_share
        if path is not None:
            path.unlink(missing_ok=True)
        if once:
            topology.public_key.unlink(missing_ok=True)

    if party(number) != topology.principal_of(party(number)).identities[0] or number not in topology.key_holders:
        raise ValueError(f"party {number} is not a key holder hosted alone")
    return {"keygen": holder_protocol(topology.key_holders, store, discard)}, ""


def _aggregator_protocols(topology: Topology):
    from aggregator.registry import protocols
    from mpdp.sessions.identity import AGGREGATOR

    public_key = keyfiles.load_public_key(topology.public_key)
    key_holders = topology.key_holders
    if key_holders != list(range(1, public_key.holders + 1)):
        raise ValueError(f"the topology's key holders {key_holders} do not match the key's {public_key.holders} holders")
    teachers = [entry.identity.id for entry in topology.parties]
    keys = contribution_keys(topology, AGGREGATOR, signs=False)
    return protocols(public_key, teachers, key_holders, keys=keys), public_key.key_id.hex()


def _curator_protocols(topology: Topology, test_mode: bool):
    from curator.registry import protocols
    from curator.resources import CuratorResources
    from mpdp.cryptocore.paillier.keypair import generate_keypair
    from mpdp.learning import datasets
    from mpdp.sessions.identity import CURATOR
    from mpdp.sessions.on_first_use import OnFirstUse

    public_key = keyfiles.load_public_key(topology.public_key)
    bits = public_key.n.bit_length()
    # ζ, Charlie's own Paillier key at the deployment's key size, and X_aux: made when Pathak, or read when
    # Hamm, first needs them.
    zeta = OnFirstUse(lambda: generate_keypair(bits))
    aux_file = topology.entry(CURATOR).data
    aux_features = OnFirstUse(lambda: datasets.load_public(aux_file)) if aux_file is not None else None
    own = CuratorResources(zeta, public_key, [entry.identity.id for entry in topology.parties], topology.key_holders,
                           aux_features, test_mode, contribution_keys(topology, CURATOR, signs=False))
    return protocols(own), public_key.key_id.hex()


def run(role: str, topology_path, number: int = 0, test_mode: bool = False, fault: str | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, insecure: bool = False, budget: Budget | None = None,
        allow_unproven: bool = False, keygen_only: bool = False, once: bool = False,
        metrics_port: int | None = None) -> None:
    from mpdp.observe.role import check_metrics_port
    from mpdp.sessions.identity import Identity

    check_metrics_port(metrics_port)  # one line, before any key or data is read

    memory.configure()  # before the role's threads allocate: freed buffers go back to the system
    topology = Topology.load(topology_path)
    if topology.insecure != insecure:
        raise ValueError("a plaintext topology needs `--insecure` on the command line, and `--insecure` "
                         "needs a topology that declares `insecure = true`")
    if keygen_only and once and _made_earlier(topology, number):
        log.info("party/%d: its key share and the public key exist (a deployment made earlier): nothing to make",
                 number)
        return
    traffic = TrafficLog()
    generic = Fault.parse(fault) if fault else None  # kill-on / stop-on / drop / delay: any role, test mode only
    if fault and not test_mode:
        raise ValueError("fault injection needs test mode")
    if fault and generic is None and role != "party":
        raise ValueError(f"unknown fault {fault!r} for the {role}")
    server_faults = (ServerFaultInterceptor(generic),) if generic and generic.kind in ("kill-on", "stop-on") else ()
    client_faults = (ClientFaultInterceptor(generic),) if generic and generic.kind in ("drop", "delay") else ()
    if role not in ("party", "aggregator", "curator"):
        raise ValueError(f"unknown role {role!r}")
    if (budget is not None or allow_unproven) and role != "party":
        raise ValueError("--budget and --allow-unproven are a party's: only parties spend privacy on their data")
    me = Identity(role, number if role == "party" else 0)
    accountant_process.isolate()  # dp-accounting and scipy.stats live in a child that exits when idle
    if keygen_only:
        if role != "party" or fault:
            raise ValueError("--keygen-only is a key holder's (a party's), without faults")
        protocols, key_id_hex = _keygen_protocols(topology, number, once)
    elif once:
        raise ValueError("--once goes with --keygen-only")
    elif role == "party":
        protocols, key_id_hex = _party_protocols(topology, number, test_mode, None if generic else fault,
                                                 budget or DEFAULT_BUDGET, allow_unproven)
    elif role == "aggregator":
        protocols, key_id_hex = _aggregator_protocols(topology)
    else:
        protocols, key_id_hex = _curator_protocols(topology, test_mode)
    principal = topology.principal_of(me)
    start_hosts(protocols, principal.identities)
    entry = topology.entry(me)
    observed = _observed(topology, principal, entry, metrics_port, role == "party" and not keygen_only, budget)
    peers = PeerChannels(principal, topology.addresses, traffic, topology.tls_for(me), max_message_bytes,
                         client_faults + observed.client_interceptors, hosts=topology.principals)
    host = RoleHost(principal, peers, protocols, test_mode)
    servicer = RoleServicer(host, traffic, RoleStatus(role, me.id, key_id_hex))

    async def stop() -> None:
        await servicer.close()
        await peers.close()
        observed.shutdown()

    asyncio.run(serve(principal, entry.bind_address, servicer.add_to, SERVICE_NAME, traffic, topology.tls_for(me), stop,
                      max_message_bytes, server_faults + observed.server_interceptors))


def _observed(topology: Topology, principal, entry, metrics_port: int | None, spends: bool, budget: Budget | None):
    """The `[observe]` extra's interceptors and endpoint (docs/observe.md): spans when OTEL_TRACES_EXPORTER asks,
    a Prometheus endpoint on the role's own host at `metrics_port`, with each hosted party's spent budget."""
    from mpdp.observe.role import metrics_port_of, observe
    from mpdp.privacy.ledger import Ledger

    host = entry.bind_address.rpartition(":")[0].strip("[]") or "127.0.0.1"
    observed = observe(str(principal), metrics_port_of(str(principal), metrics_port), host)
    if observed.metrics is not None and spends:
        data = {me.id: topology.entry(me).data for me in principal.identities}
        observed.metrics.watch_ledgers({number: Ledger(path, number, budget or DEFAULT_BUDGET)
                                        for number, path in data.items() if path is not None})
    return observed
