"""The `keygen` protocol through the role-host machinery (the in-process twin of the network: envelopes
serialised as on the wire, delivered in a random order): holders that talk only to each other end with
one key, each keeping its own share."""

import random
from dataclasses import replace

import pytest

from mpdp.cryptocore.dkg import messages, sieve
from mpdp.cryptocore.paillier.threshold import decrypt
from mpdp.proto.v1 import keygen_pb2
from mpdp.protocols.keygen import codec, decision
from mpdp.protocols.keygen.holder_side import State
from mpdp.protocols.keygen.protocol import NAME, holder_protocol
from mpdp.sessions.identity import CLIENT, party
from mpdp.wire.twin import InProcessNetwork
from tests.test_dkg import plant_primes

BITS, HOLDERS, THRESHOLD, BATCH = 1024, 3, 3, 8  # 2t > ℓ + 1: three holders need all three


def _network(stored, committee=(1, 2, 3), seed=5, prepared=None):
    protocol = holder_protocol(list(committee), lambda me, share: stored.__setitem__(me.id, share),
                               lambda me: stored.pop(me.id, None), prepared)
    return InProcessNetwork("keygen-1", {party(j): {NAME: protocol} for j in committee}, random.Random(seed))


def commit(net, holders, digest=None, to=None, session="keygen-1-commit"):
    """The client's commit, its own session over the same holders' registries: the digest they all reported unless
    `digest` says otherwise, to every holder unless `to` names some."""
    reports = [net.sides[party(j)].result()[1] for j in holders]
    _, agreed = decision.decide(reports, len(holders))
    twin = InProcessNetwork(session, net.registries, random.Random(1))
    for j in to or holders:
        twin.send(CLIENT, party(j), NAME, "commit", keygen_pb2.KeygenCommit(ceremony=net.session_id,
                                                                           digest=digest or agreed))
    twin.run()
    return twin


def test_holders_generate_one_key_over_the_role_host_and_each_keeps_its_share(monkeypatch):
    plant_primes(monkeypatch, BITS, HOLDERS, BATCH)
    stored: dict = {}
    net = _network(stored)
    for j in range(1, HOLDERS + 1):
        net.send(CLIENT, party(j), NAME, "open", keygen_pb2.KeygenOpen(bits=BITS, holders=HOLDERS,
                                                                         threshold=THRESHOLD, batch=BATCH))
    net.run()
    assert not net.refused, net.refused
    results = [net.sides[party(j)].result() for j in range(1, HOLDERS + 1)]
    assert all(kind == "public_key" for kind, _ in results)
    keys = {codec.public_key_from_proto(body) for _, body in results}
    assert len(keys) == 1 and len({body.digest for _, body in results}) == 1
    [public] = keys
    assert not stored  # prepared, in memory: nothing is written before the client's commit
    twin = commit(net, range(1, HOLDERS + 1))
    assert not twin.refused, twin.refused
    assert all(twin.sides[party(j)].result()[0] == "committed" for j in range(1, HOLDERS + 1))
    assert sorted(stored) == [1, 2, 3] and all(share.public == public for share in stored.values())
    c = public.encryptor.encrypt(2024)
    assert decrypt(public, c, [stored[j].partial_decrypt(c, b"x") for j in (1, 2, 3)], b"x") == (2024, {})
    # holders talk to each other only; the client's messages are the openings
    assert set(role for role, _, _ in net.messages) == {"client", "party"}


def test_an_opening_that_does_not_match_the_committee_or_comes_from_a_holder_is_refused():
    stored: dict = {}
    net = _network(stored)
    net.send(CLIENT, party(1), NAME, "open", keygen_pb2.KeygenOpen(bits=BITS, holders=5, threshold=3))
    net.send(party(2), party(3), NAME, "open", keygen_pb2.KeygenOpen(bits=BITS, holders=3, threshold=2))
    net.send(CLIENT, party(2), NAME, "open", keygen_pb2.KeygenOpen(bits=BITS, holders=3, threshold=3, batch=1 << 20))
    net.run()
    reasons = sorted(reason for *_, reason in net.refused)
    assert len(reasons) == 3 and not stored
    assert any("5" in r for r in reasons) and any("may not open" in r for r in reasons) \
        and any("candidates per attempt" in r for r in reasons)


@pytest.mark.parametrize("stage_round", [1])
def test_a_round_from_outside_the_committee_or_far_ahead_is_refused_and_changes_nothing(stage_round):
    stored: dict = {}
    net = _network(stored)
    net.send(CLIENT, party(1), NAME, "open", keygen_pb2.KeygenOpen(bits=BITS, holders=3, threshold=3, batch=BATCH))
    net.run()
    side = net.sides[party(1)]
    before = side.holder.round
    stray = keygen_pb2.KeygenRound(stage="candidates", attempt=1, round=stage_round, values=[b"\x01"])
    far = keygen_pb2.KeygenRound(stage="products", attempt=1, round=before + 2, broadcast=True, values=[b"\x01"])
    net.registries[party(9)] = net.registries[party(1)]
    net.send(party(9), party(1), NAME, "round", stray)
    net.send(party(2), party(1), NAME, "round", far)
    net.run()
    reasons = [reason for *_, reason in net.refused]
    assert any("not another key holder" in r for r in reasons) and any("round" in r for r in reasons)
    assert side.holder.round == before and not side.finished


def test_an_inconsistent_sieve_sharing_on_the_wire_aborts_every_holder_and_stores_nothing(monkeypatch):
    """Holder 2 adds 1 to every sieve point it sends holder 1 (among three holders the two contributors' sharings
    are multiplied once, without a reshare): a revealed candidate then shares a factor with the sieving modulus,
    holder 1 aborts, the abort reaches every holder and no share is kept."""
    modulus = sieve.sieving_modulus(BITS, HOLDERS, sieve.default_bound(BITS))
    honest = codec.round_to_proto

    def tampered(message):
        if message.stage == messages.SIEVE and message.sender == 2 and message.recipient == 1:
            message = replace(message, values=tuple((v + 1) % modulus for v in message.values))
        return honest(message)

    monkeypatch.setattr(codec, "round_to_proto", tampered)
    stored: dict = {}
    net = _network(stored)
    for j in range(1, HOLDERS + 1):
        net.send(CLIENT, party(j), NAME, "open", keygen_pb2.KeygenOpen(bits=BITS, holders=HOLDERS,
                                                                         threshold=THRESHOLD, batch=32))
    net.run()
    assert not stored
    assert all(net.sides[party(j)].state is State.ABORTED for j in range(1, HOLDERS + 1))
    assert all(net.sides[party(j)].result() is None for j in range(1, HOLDERS + 1))


def _prepared(monkeypatch, stored, prepared=None):
    plant_primes(monkeypatch, BITS, HOLDERS, BATCH)
    net = _network(stored, prepared=prepared)
    for j in range(1, HOLDERS + 1):
        net.send(CLIENT, party(j), NAME, "open", keygen_pb2.KeygenOpen(bits=BITS, holders=HOLDERS,
                                                                         threshold=THRESHOLD, batch=BATCH))
    net.run()
    assert all(net.sides[party(j)].state is State.DONE for j in range(1, HOLDERS + 1)) and not stored
    return net


def test_a_commit_from_a_holder_or_with_another_digest_or_ceremony_is_refused_and_changes_nothing(monkeypatch):
    """Only the client commits, only the digest the holder acknowledged, only a ceremony it prepared; each refusal
    leaves the prepared share in place, and the client's right commit then writes it."""
    stored: dict = {}
    net = _prepared(monkeypatch, stored)
    digest = net.sides[party(1)].result()[1].digest
    wrong = bytes([digest[0] ^ 1]) + digest[1:]
    twin = InProcessNetwork("keygen-commit-bad", net.registries, random.Random(2))
    twin.send(party(2), party(1), NAME, "commit", keygen_pb2.KeygenCommit(ceremony=net.session_id, digest=digest))
    twin.run()
    twin.send(CLIENT, party(1), NAME, "commit", keygen_pb2.KeygenCommit(ceremony=net.session_id, digest=wrong))
    twin.send(CLIENT, party(1), NAME, "commit", keygen_pb2.KeygenCommit(ceremony="keygen-other", digest=digest))
    twin.send(CLIENT, party(1), NAME, "commit", keygen_pb2.KeygenCommit(ceremony=net.session_id, digest=digest[:8]))
    twin.run()
    reasons = [reason for *_, reason in twin.refused]
    assert len(reasons) == 4 and not stored, reasons
    assert any("may not commit" in r for r in reasons) and any("another digest" in r for r in reasons) \
        and any("no prepared share" in r for r in reasons) and any("32-byte digest" in r for r in reasons)
    twin.send(CLIENT, party(1), NAME, "commit", keygen_pb2.KeygenCommit(ceremony=net.session_id, digest=digest))
    twin.run()
    assert sorted(stored) == [1] and twin.sides[party(1)].result()[0] == "committed"
    again = commit(net, [1], to=[1], session="keygen-commit-again")  # written once: a second commit finds nothing
    assert any("no prepared share" in reason for *_, reason in again.refused) and sorted(stored) == [1]


def test_a_prepared_share_past_the_commit_window_is_gone(monkeypatch):
    """The timeout rule: a share the client has not committed within the window is dropped, unwritten."""
    from mpdp.protocols.keygen.prepared import PreparedShares

    now = [0.0]
    stored: dict = {}
    net = _prepared(monkeypatch, stored, PreparedShares(window_s=60.0, clock=lambda: now[0]))
    now[0] = 61.0
    twin = commit(net, range(1, HOLDERS + 1))
    assert len(twin.refused) == HOLDERS and not stored
    assert all("no prepared share" in reason for *_, reason in twin.refused)


def test_the_commit_costs_one_broadcast_round_among_the_holders_and_one_client_message_each(monkeypatch):
    """The closed form docs/performance-dkg.md states: the acknowledgement is ℓ(ℓ − 1) messages of one 32-byte digest
    (as many as the confirmation), and the commit ℓ messages from the client, nothing among the holders."""
    from collections import Counter

    from mpdp.wire.envelope import identities, unwrap

    class CountingStages(InProcessNetwork):
        def __init__(self, *args):
            super().__init__(*args)
            self.stages: Counter = Counter()
            self.sizes: Counter = Counter()

        def deliver(self, envelope, call_id=""):
            sender, receiver = identities(envelope)
            _, kind, body = unwrap(envelope, self.registries[receiver])
            if kind == "round":
                self.stages[body.stage] += 1
                self.sizes[body.stage] += sum(len(v) for v in body.values)
            super().deliver(envelope, call_id)

    plant_primes(monkeypatch, BITS, HOLDERS, BATCH)
    stored: dict = {}
    plain = _network(stored)
    net = CountingStages(plain.session_id, plain.registries, random.Random(5))
    for j in range(1, HOLDERS + 1):
        net.send(CLIENT, party(j), NAME, "open", keygen_pb2.KeygenOpen(bits=BITS, holders=HOLDERS,
                                                                         threshold=THRESHOLD, batch=BATCH))
    net.run()
    pairs = HOLDERS * (HOLDERS - 1)
    assert net.stages[messages.ACKNOWLEDGEMENT] == net.stages[messages.CONFIRMATION] == pairs
    assert pairs * 32 <= net.sizes[messages.ACKNOWLEDGEMENT] <= pairs * 33  # a sign byte when the top bit is set
    twin = commit(net, range(1, HOLDERS + 1))
    assert twin.messages == Counter({("client", "party", "Step/keygen/commit"): HOLDERS}), twin.messages
    assert sorted(stored) == [1, 2, 3]
