"""`MpdpWorkflow`: the server side, a fit workflow in the shape of Flower's `SecAggPlusWorkflow`
(`DefaultWorkflow(fit_workflow=MpdpWorkflow(...))`). Per round: one round trip to the sampled clients (fit
instructions out, one signed encrypted weighted update back, collected by `SumCollector`), one to the key
holders (the signed contributions out, proven partial decryptions back, verified and combined by
`SumCombiner`). Once per run, before the first round: who is which party, and either the provisioned key or
the committee's distributed key generation (`keygen="dkg"`), each of its stages one round trip.

The strategy sees what it sees under SecAgg+: every accepted client's FitRes with the aggregate in place of
its parameters, so FedAvg's weighted mean of them is the decrypted weighted mean."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from flwr.app import ConfigRecord, Message, RecordDict
from flwr.app.message_type import MessageType
from flwr.common import ndarrays_to_parameters, parameters_to_ndarrays
from flwr.compat.common import recorddict_compat as compat
from flwr.server.compat.legacy_context import LegacyContext
from flwr.server.workflow.constant import MAIN_CONFIGS_RECORD, MAIN_PARAMS_RECORD, Key

from mpdp.cryptocore.errors import CryptoError
from mpdp.cryptocore.paillier import keyfiles
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.flower import protocol
from mpdp.flower.client import ciphertexts_of
from mpdp.privacy.collusion import MIN_CONTRIBUTORS
from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.sessions.errors import ProtocolError
from mpdp.threshold_sum import quorums
from mpdp.threshold_sum.collector import SumCollector
from mpdp.threshold_sum.combiner import SumCombiner

log = logging.getLogger("mpdp.flower")


@dataclass
class RoundOutcome:
    round: int
    contributors: list[int]
    absent: dict[int, str]
    decryptors: list[int]
    rejected_holders: dict[int, str]
    total_weight: float
    epsilon: float | None = None  # with noise: this round's release alone, at the run's δ
    epsilon_so_far: float | None = None  # every round up to this one, composed
    delta_so_far: float | None = None  # the δ really spent so far (≤ the run's δ; includes the truncation's)
    guarantee: dict | None = None  # mpdp's Guarantee (mpdp.privacy.composition) of the run so far, as JSON


@dataclass
class RunLog:
    """The run's record: per round who contributed, who decrypted, and (with noise) ε of the round and so far."""

    rounds: list[RoundOutcome] = field(default_factory=list)
    keygen_round_trips: int = 0


class MpdpWorkflow:
    def __init__(self, committee: int, threshold: int, *, min_contributors: int = 3, keygen: str = "provisioned",
                 key_bits: int = 2048, clip: float = 8.0, max_weight: float = 1000.0, fractional_bits: int = 20,
                 timeout: float | None = None, noise=None):
        """`committee`: parties 1..committee hold key shares, `threshold` of them decrypt. `min_contributors`:
        no sum of fewer uploads is decrypted (the holders enforce their own floor too). `keygen`: "provisioned"
        (the bundles carry the key) or "dkg" (the committee generates it over Flower messages, `key_bits`).
        `noise`: a `noise.NoiseShares` to add Skellam shares and account for ε per round."""
        if keygen not in ("provisioned", "dkg"):
            raise ValueError("keygen is 'provisioned' or 'dkg'")
        quorums.check(threshold, committee)  # 2t > ℓ + 1: the holders refuse any other key anyway
        self.committee, self.threshold = committee, threshold
        self.min_contributors = max(MIN_CONTRIBUTORS, min_contributors)
        self.keygen, self.key_bits = keygen, key_bits
        self.clip, self.max_weight, self.fractional_bits = clip, max_weight, fractional_bits
        self.timeout = timeout
        self.noise = noise
        self.node_of: dict[int, int] = {}  # party → Flower node id
        self.party_of: dict[int, int] = {}
        self.public_key: ThresholdPublicKey | None = None
        self.key_signatures: list[bytes] = []
        self.keyed_nodes: set[int] = set()
        self.log = RunLog()
        self.rdp_rounds: list[int] = []  # contributors per noisy round, for the accountant

    def _guarantee(self, terms: protocol.RoundTerms, rounds: list[int]):
        """mpdp's Guarantee of these rounds' releases composed (RDP adds over rounds), each with the noise its
        contributors carry beside the colluding ones (mpdp.privacy.vector_skellam)."""
        assert self.noise is not None
        return self.noise.guarantee(terms.count, terms.fractional_bits, rounds, self.min_contributors, terms.summands)

    # --- plumbing --------------------------------------------------------------------------------------------

    def _send(self, grid, current_round: int, contents: dict[int, RecordDict]) -> dict[int, Message]:
        """One round trip; the replies without error, by node."""
        messages = [Message(content=content, dst_node_id=node, message_type=MessageType.TRAIN,
                            group_id=str(current_round)) for node, content in contents.items()]
        replies = grid.send_and_receive(messages, timeout=self.timeout)
        good = {}
        for reply in replies:
            if reply.has_error():
                log.warning("node %s: %s", reply.metadata.src_node_id, reply.error.reason)
            else:
                good[reply.metadata.src_node_id] = reply
        return good

    @staticmethod
    def _record(**values) -> RecordDict:
        return RecordDict({protocol.RECORD: ConfigRecord(values)})

    # --- once per run ----------------------------------------------------------------------------------------

    def _setup(self, grid, session: str, nodes: list[int]) -> None:
        replies = self._send(grid, 0, {node: self._record(stage=protocol.SETUP, session=session) for node in nodes})
        keys, signatures = {}, {}
        for node, reply in replies.items():
            record = reply.content.config_records[protocol.RECORD]
            party = int(cast(int, record["party"]))
            if party in self.node_of:
                raise ValueError(f"two nodes claim party {party}")
            self.node_of[party], self.party_of[node] = node, party
            if "public_key" in record and party <= self.committee:
                keys[party] = str(record["public_key"])
                signatures[party] = bytes(cast(bytes, record["key_signature"]))
        if self.keygen == "dkg" and not keys:
            self._generate_key(grid, session)
            return
        if len(set(keys.values())) != 1:
            raise ValueError(f"the committee's members hold {len(set(keys.values()))} different keys")
        self.public_key = keyfiles.public_key_from_dict(json.loads(next(iter(keys.values()))))
        self.key_signatures = [signatures[p] for p in sorted(signatures)]
        if self.keygen == "provisioned":
            self.keyed_nodes = set(self.party_of)

    def _generate_key(self, grid, session: str) -> None:
        """The committee's key generation (mpdp.cryptocore.dkg), each stage one round trip through the server,
        which relays sealed messages it can neither read nor forge (channels.py)."""
        members = {p: self.node_of[p] for p in range(1, self.committee + 1) if p in self.node_of}
        if len(members) != self.committee:
            raise ValueError(f"{len(members)} of the {self.committee} committee members are connected")
        replies = self._send(grid, 0, {node: self._record(stage=protocol.DKG_HELLO, session=session,
                                                          bits=self.key_bits, threshold=self.threshold)
                                       for node in members.values()})
        self.log.keygen_round_trips += 1
        hellos = {self.party_of[n]: bytes(cast(bytes, r.content.config_records[protocol.RECORD]["hello"]))
                  for n, r in replies.items()}
        if len(hellos) != self.committee:
            raise ValueError("a committee member did not join the key generation")
        parties = sorted(hellos)
        inboxes: dict[int, list[bytes]] = {p: [] for p in parties}
        done: dict[int, tuple[str, bytes]] = {}
        first = True
        while len(done) < self.committee:
            introductions: dict = {"hello_parties": parties, "hellos": [hellos[q] for q in parties]} if first else {}
            contents = {members[p]: self._record(stage=protocol.DKG, inbox=inboxes[p], **introductions)
                        for p in parties}
            first = False
            replies = self._send(grid, 0, contents)
            self.log.keygen_round_trips += 1
            if len(replies) != self.committee:
                raise ValueError("a committee member failed during the key generation; start the run again")
            inboxes = {p: [] for p in parties}
            for node, reply in replies.items():
                record = reply.content.config_records[protocol.RECORD]
                for sealed, to in zip(cast(list, record["outbox"]), cast(list, record["recipients"])):
                    inboxes[int(to)].append(bytes(sealed))
                if record["done"]:
                    done[self.party_of[node]] = (str(record["public_key"]), bytes(cast(bytes, record["key_signature"])))
        if len({key for key, _ in done.values()}) != 1:
            raise ValueError("the committee's members finished with different keys")
        self.public_key = keyfiles.public_key_from_dict(json.loads(done[1][0]))
        self.key_signatures = [done[p][1] for p in sorted(done)]
        self.keyed_nodes = set(members.values())
        log.info("key generation: %d-bit key, %d of %d, %d round trips", self.key_bits, self.threshold,
                 self.committee, self.log.keygen_round_trips)

    # --- every round -----------------------------------------------------------------------------------------

    def __call__(self, grid, context: LegacyContext) -> None:
        if not isinstance(context, LegacyContext):
            raise TypeError(f"Expect a LegacyContext, but get {type(context).__name__}.")
        session = str(grid.run.run_id)  # what each client reads from its messages' metadata
        cfg = context.state.config_records[MAIN_CONFIGS_RECORD]
        current_round = cast(int, cfg[Key.CURRENT_ROUND])
        parameters = compat.arrayrecord_to_parameters(context.state.array_records[MAIN_PARAMS_RECORD], keep_input=True)
        shapes = [a.shape for a in parameters_to_ndarrays(parameters)]
        # The strategy waits for its minimum of clients to connect: the setup then reaches every one of them.
        proxy_fitins = context.strategy.configure_fit(current_round, parameters, context.client_manager)
        if not proxy_fitins:
            log.info("configure_fit: no clients selected, cancel")
            return
        if self.public_key is None:
            counted_round = getattr(grid, "round", None)
            if counted_round is not None:
                grid.round = 0  # a CountingGrid books the once-per-run setup (and key generation) as round 0
            self._setup(grid, session, [proxy.node_id for proxy in context.client_manager.all().values()])
            if counted_round is not None:
                grid.round = counted_round
        assert self.public_key is not None
        proxies = {proxy.node_id: (proxy, fitins) for proxy, fitins in proxy_fitins}
        noise = {} if self.noise is None else {"noise_multiplier": self.noise.noise_multiplier,
                                               "l2_clip": self.noise.l2_clip, "delta": self.noise.delta,
                                               "noise_max_epsilon": self.noise.max_epsilon,
                                               "noise_max_rounds": self.noise.max_rounds}
        terms = protocol.RoundTerms(session, current_round, sum(int(np.prod(s)) for s in shapes), len(self.node_of),
                                    self.min_contributors, self.clip, self.max_weight, self.fractional_bits, **noise)
        codec = terms.codec(self.public_key.n)
        if self.noise is not None:  # refused before any client spends its data on a round the bound cannot cover
            self.noise.admit(terms.count, terms.fractional_bits, self.rdp_rounds, self.min_contributors, terms.summands)

        # Round trip 1: fit instructions out, signed encrypted weighted updates back.
        contents = {}
        for node, (_, fitins) in proxies.items():
            content = compat.fitins_to_recorddict(fitins, True)
            extra: dict = {"stage": protocol.TRAIN, "terms": terms.to_json()}
            if node not in self.keyed_nodes:
                extra.update(public_key=json.dumps(keyfiles.public_key_to_dict(self.public_key)),
                             key_signatures=self.key_signatures)
            content.config_records[protocol.RECORD] = ConfigRecord(extra)
            contents[node] = content
        replies = self._send(grid, current_round, contents)
        sampled = sorted(self.party_of[n] for n in proxies)
        collector = SumCollector(self.public_key, sampled, codec.ciphertext_count, self.min_contributors,
                                 terms.slot(self.public_key.n))
        results: list = []
        failures: list[tuple | BaseException] = []
        for node, reply in replies.items():
            record = reply.content.config_records[protocol.RECORD]
            party = self.party_of[node]
            try:
                if int(cast(int, record["party"])) != party:
                    raise ValueError(f"node of party {party} uploads as {record['party']!r}")
                collector.accept(party, ciphertexts_of(record),
                                 threshold_sum_pb2.ContributionSignature.FromString(bytes(cast(bytes, record["signature"]))))
            except (ProtocolError, CryptoError, ValueError) as error:
                collector.mark_absent(party, str(error))
                failures.append(error)
                continue
            self.keyed_nodes.add(node)
            del reply.content.config_records[protocol.RECORD]
            results.append((proxies[node][0], compat.recorddict_to_fitres(reply.content, keep_input=True)))
        for party in sampled:
            if party not in collector.contributions:
                collector.mark_absent(party, "no upload")
        request = collector.close()  # refuses fewer than min_contributors

        # Round trip 2: the signed contributions to the key holders, proven partial decryptions back.
        holders = [p for p in range(1, self.committee + 1) if p in self.node_of]
        answers = self._send(grid, current_round, {
            self.node_of[p]: self._record(stage=protocol.DECRYPT, terms=terms.to_json(),
                                          request=request.SerializeToString()) for p in holders})
        combiner = SumCombiner(self.public_key, list(range(1, self.committee + 1)), collector.aggregate,
                               terms.proof_context())
        for party in range(1, self.committee + 1):
            answer = answers.get(self.node_of.get(party, -1))
            if answer is None:
                combiner.mark_absent(party, "no answer")
                continue
            try:
                combiner.accept(party, threshold_sum_pb2.PartialDecryptions.FromString(
                    bytes(cast(bytes, answer.content.config_records[protocol.RECORD]["partials"]))))
            except (ProtocolError, CryptoError) as error:
                log.warning("key holder %d: %s", party, error)
        plaintexts, decryptors = combiner.combine()  # only proofs that verified
        mean, total_weight = codec.decode_mean(plaintexts, len(collector.contributors))
        epsilon = None
        if self.noise is not None:  # the mean clipped delta (noisy), applied to the global model
            mean = np.concatenate([np.ravel(a) for a in parameters_to_ndarrays(parameters)]) + mean
            self.rdp_rounds.append(len(collector.contributors))
            this_round, so_far = self._guarantee(terms, self.rdp_rounds[-1:]), self._guarantee(terms, self.rdp_rounds)
            epsilon = this_round.epsilon, so_far.epsilon, so_far.delta, so_far.to_json()
        arrays, offset = [], 0
        for shape in shapes:
            size = int(np.prod(shape))
            arrays.append(mean[offset:offset + size].reshape(shape))
            offset += size
        aggregate = ndarrays_to_parameters(arrays)
        for _, fitres in results:
            fitres.parameters = aggregate
        outcome = RoundOutcome(current_round, list(collector.contributors), dict(collector.absent), decryptors,
                               dict(combiner.rejected), total_weight, *(epsilon or (None, None, None, None)))
        if epsilon is not None:
            log.info("round %d: ε = %.4g this round, ε = %.4g over the run's %d rounds (δ = %.4g of %g; %s)",
                     current_round, epsilon[0], epsilon[1], len(self.rdp_rounds), epsilon[2], self.noise.delta,
                     epsilon[3]["mechanism"])
        self.log.rounds.append(outcome)
        log.info("round %d: %d contributions summed, decrypted by holders %s", current_round,
                 len(collector.contributors), decryptors)
        parameters_aggregated, metrics = context.strategy.aggregate_fit(current_round, results, failures)
        if parameters_aggregated:
            context.state.array_records[MAIN_PARAMS_RECORD] = compat.parameters_to_arrayrecord(parameters_aggregated, True)
            context.history.add_metrics_distributed_fit(server_round=current_round, metrics=metrics)
