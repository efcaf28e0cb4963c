"""A trivial protocol that lives in the tests only: a secure sum of one integer per party, on the shared
threshold sum. It reaches every role through the registries alone (its messages travel in the Envelope's
`extension`), which is the extension point a new protocol uses."""

from __future__ import annotations

import enum

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from mpdp.proto.v1 import common_pb2, threshold_sum_pb2  # their types must be in the pool
from mpdp.sessions.errors import denied, invalid
from mpdp.sessions.identity import AGGREGATOR, CLIENT, Identity, party
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import RoleSide, handles
from mpdp.threshold_sum import decryption
from mpdp.threshold_sum.binding import SumSlot, signature_for
from mpdp.threshold_sum.codec import ciphertexts_to_proto
from mpdp.threshold_sum.collector import SumCollector
from mpdp.threshold_sum.combiner import SumCombiner
from mpdp.threshold_sum.context import proof_context


def _message_type():
    pool = descriptor_pool.Default()
    name = "mpdp.test.SecureSumMessage"
    try:
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
    except KeyError:
        pass
    file = descriptor_pb2.FileDescriptorProto(name="tests/secure_sum.proto", package="mpdp.test", syntax="proto3",
                                              dependency=["mpdp/proto/v1/common.proto",
                                                          "mpdp/proto/v1/threshold_sum.proto"])
    message = file.message_type.add(name="SecureSumMessage")
    message.oneof_decl.add(name="body")
    fields = [("open", ".mpdp.v1.Empty"), ("request", ".mpdp.v1.Empty"), ("contribution", ".mpdp.v1.Contribution"),
              ("decryption_request", ".mpdp.v1.DecryptionRequest"),
              ("partial_decryptions", ".mpdp.v1.PartialDecryptions"), ("total", None)]
    for number, (field_name, type_name) in enumerate(fields, start=1):
        field = message.field.add(name=field_name, number=number, label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
                                  oneof_index=0)
        if type_name is None:
            field.type = descriptor_pb2.FieldDescriptorProto.TYPE_INT64
        else:
            field.type, field.type_name = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE, type_name
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


SecureSumMessage = _message_type()
NAME = "secure-sum"


class State(enum.Enum):
    OPEN = "open"
    RUNNING = "running"
    DONE = "done"
    ABORTED = "aborted"


def _context(session_id: str) -> bytes:
    return proof_context("secure-sum", session_id)


class SumAggregator(RoleSide):
    State = State

    def __init__(self, session_id, public_key, parties: list[int], key_holders: list[int]):
        super().__init__(session_id, State.OPEN)
        self.identity, self.parties, self.key_holders = AGGREGATOR, parties, key_holders
        self.collector = SumCollector(public_key, parties, 1, len(parties), SumSlot(NAME, session_id))
        self.combiner: SumCombiner | None = None
        self.total: int | None = None

    @property
    def participants(self) -> list[Identity]:
        return [party(p) for p in self.parties]

    @handles("open")
    def request_contributions(self, sender, body) -> list[Outbound]:
        self._expect_client(sender)
        self._advance(State.OPEN, State.RUNNING, "open")
        return [Outbound(party(p), "request", common_pb2.Empty()) for p in self.parties]

    @handles("contribution")
    def collect(self, sender, body) -> list[Outbound]:
        self._require(State.RUNNING, "contribution")
        self.collector.accept(sender.id, body.ciphertexts, body.signature)
        if not self.collector.all_in:
            return []
        request = self.collector.close()
        self.combiner = SumCombiner(self.collector.public_key, self.key_holders, self.collector.aggregate,
                                    _context(self.session_id))
        return [Outbound(party(h), "decryption_request", request) for h in self.key_holders]

    @handles("partial_decryptions")
    def combine(self, sender, body) -> list[Outbound]:
        self._require(State.RUNNING, "partial_decryptions")
        if self.combiner is None:
            raise invalid("partial decryptions before the sum was closed")
        self.combiner.accept(sender.id, body)
        if self.combiner.settled:
            [self.total], _ = self.combiner.combine()
            self._advance(State.RUNNING, State.DONE, "release")
        return []

    @staticmethod
    def _expect_client(sender) -> None:
        if sender != CLIENT:
            raise denied(f"{sender} may not open a secure sum")

    def result(self):
        return ("total", self.total) if self.total is not None else None


class SumParty(RoleSide):
    State = State

    def __init__(self, session_id, me: Identity, own):
        super().__init__(session_id, State.RUNNING)
        self.identity, self.own = me, own

    @property
    def participants(self) -> list[Identity]:
        return [AGGREGATOR]

    @handles("request")
    def contribute(self, sender, body) -> list[Outbound]:
        self._expect_aggregator(sender)
        public_key = self.own.public_key
        value = int(self.own.labels.sum())  # the party's private integer: how many positive labels it holds
        ciphertexts = ciphertexts_to_proto(public_key, [public_key.encryptor.encrypt(value)])
        signature = signature_for(self.own.contribution_keys, SumSlot(NAME, self.session_id), self.identity.id,
                                  public_key.key_id, list(ciphertexts.values))
        contribution = threshold_sum_pb2.Contribution(sender=self.identity.id, ciphertexts=ciphertexts,
                                                      signature=signature)
        if self.own.key_share is None:
            self._advance(State.RUNNING, State.DONE, "contribute")
        return [Outbound(AGGREGATOR, "contribution", contribution)]

    @handles("decryption_request")
    def decrypt(self, sender, body) -> list[Outbound]:
        self._expect_aggregator(sender)
        public_key = self.own.public_key
        ciphertexts, _ = decryption.check_request(public_key, body, SumSlot(NAME, self.session_id),
                                                  self.own.contribution_keys, public_key.holders * 100, 1, 1)
        partials = decryption.partial_decryptions(self.own.key_share, ciphertexts, _context(self.session_id))
        self._advance(State.RUNNING, State.DONE, "decrypt")
        return [Outbound(AGGREGATOR, "partial_decryptions", partials)]

    @staticmethod
    def _expect_aggregator(sender) -> None:
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not send to a secure-sum party")


def party_protocol(resources) -> RoleProtocol:
    return RoleProtocol(NAME, SecureSumMessage, frozenset({"request"}),
                        lambda session_id, me, sender, kind, body: SumParty(session_id, me, resources(me)),
                        (SumParty,), frozenset({"request", "decryption_request"}))


def aggregator_protocol(public_key, parties: list[int], key_holders: list[int]) -> RoleProtocol:
    return RoleProtocol(NAME, SecureSumMessage, frozenset({"open"}),
                        lambda session_id, me, sender, kind, body: SumAggregator(session_id, public_key, parties,
                                                                                 key_holders),
                        (SumAggregator,), frozenset({"open", "contribution", "partial_decryptions"}))
