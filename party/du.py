"""A party's (and key holder's) side of a Du run (du.md "Rounds"), free of gRPC.

TRAINING --the final model--> DONE; any --abort--> ABORTED. Each round the server's θ_k arrives; the party
minimises its freshly perturbed local objective from it and uploads θ_ik — in the clear, or packed and
encrypted under the threshold key with secure aggregation, where as a key holder it also gives proven
partial decryptions of each round's aggregate to the server. A party that fails ends quietly: the
server drops it from later rounds.
"""

from __future__ import annotations

import enum
import time
from typing import Callable

import numpy as np

from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.proto.v1 import common_pb2, du_pb2
from mpdp.protocols.du import accounting, encoding, proven_upload
from mpdp.protocols.du.local import local_update, noise_source
from mpdp.protocols.du.objectives import augment
from mpdp.protocols.du.parameters import FRACTIONAL_BITS, MAX_RUN_STEPS, DuParameters
from mpdp.sessions.errors import denied, invalid, precondition
from mpdp.sessions.identity import AGGREGATOR, CLIENT, Identity
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import RoleSide, handles
from mpdp.threshold_sum.binding import SumSlot
from mpdp.threshold_sum.context import proof_context
from party.charge import Charged
from party.key_holder import proven_partials, signed
from party.resources import PartyResources

MAX_ROUND_DEADLINE_S = 3600.0


class State(enum.Enum):
    TRAINING = "training"
    DONE = "done"
    ABORTED = "aborted"


class DuPartySide(Charged, RoleSide):
    State = State
    announce_abort = False

    def __init__(self, session_id: str, own: PartyResources, parameters: DuParameters, round_deadline_s: float,
                 noise_seed: int):
        super().__init__(session_id, State.TRAINING)
        self.identity = Identity("party", own.id)
        self.own = own
        self.parameters = parameters
        self.features = augment(own.features)
        self.labels = own.labels.astype(float)
        self.noise_seed = noise_seed
        self.deadline_seconds = round_deadline_s
        self.patience_s = 2 * round_deadline_s + 30  # a round, its decryption, and slack
        self.next_round = 0
        self.decrypted: set[int] = set()
        self.uploads: list[np.ndarray] = []  # test mode only
        self.final: np.ndarray | None = None
        self._heard = time.monotonic()

    @property
    def participants(self) -> list[Identity]:
        return [AGGREGATOR]

    def may_abort(self, sender: Identity) -> bool:
        return sender in (AGGREGATOR, CLIENT)

    def receive(self, sender: Identity, kind: str, body) -> list[Outbound]:
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not send Du '{kind}' messages to a party")
        self._require(State.TRAINING, kind)
        self._heard = time.monotonic()
        return self.handle(sender, kind, body) or []

    @handles("model")
    def train_round(self, sender: Identity, body: du_pb2.DuModel) -> list[Outbound]:
        """A round: θ_k in, this party's noisy local update out; the final model ends the run."""
        p = self.parameters
        if DuParameters.from_proto(body.parameters) != p:
            raise invalid("the parameters changed during the run")
        theta = np.array(body.theta, dtype=float)
        if theta.shape != (p.weights,) or not np.all(np.isfinite(theta)) or np.max(np.abs(theta)) > p.bound:
            raise invalid(f"θ_k must be {p.weights} finite values in [−B, B]")
        if body.final:
            self.final = theta
            self._advance(State.TRAINING, State.DONE, "the final model")
            return []
        if body.round >= p.rounds:  # R·ε is what the ledger holds: round R and later would spend beyond it
            self.abort(f"the server sent round {body.round} of a run limited to {p.rounds}")
            raise self.own.refuse(self.session_id, "du", f"round {body.round} is at or past the limit R = {p.rounds}")
        if body.round != self.next_round:
            raise precondition(f"round {body.round} arrived; round {self.next_round} was expected (replay or out of order)")
        self.next_round += 1
        updated = local_update(p, self.features, self.labels, theta,
                               noise_source(self.noise_seed, self.own.id, body.round))
        if self.own.test_mode:
            self.uploads.append(updated)
        upload = self._upload(body.round, updated)
        self._release()  # the noisy local update leaves: the charge stays (or a refund came first: it does not)
        return [Outbound(AGGREGATOR, "upload", upload)]

    def _upload(self, round_number: int, theta: np.ndarray) -> du_pb2.DuUpload:
        p, records = self.parameters, self._records()
        if not p.secure_aggregation:
            return du_pb2.DuUpload(round=round_number, records=records, theta=theta.tolist())
        public_key = self.own.public_key
        ciphertexts, proof = self._prove_upload(records, self._scaled(records, theta), round_number)
        values = [ct.to_bytes(public_key.paillier, c) for c in ciphertexts]
        return du_pb2.DuUpload(round=round_number, encrypted=common_pb2.Ciphertexts(key_id=public_key.key_id,
                                                                                    values=values),
                               signature=signed(self.own, SumSlot.of("du", self.session_id, p, round_number),
                                                public_key.key_id, values),
                               proof=proof)

    def _records(self) -> int:
        """n_i, the weight this party claims: its record count."""
        return len(self.labels)

    def _scaled(self, records: int, theta: np.ndarray) -> list[int]:
        """θ on the fixed-point grid, checked to be within ±B (and n_i within [1, MAX_RECORDS])."""
        encoding.encode(self.parameters, records, theta)
        return [int(v) for v in np.round(theta * 2**FRACTIONAL_BITS)]

    def _prove_upload(self, records: int, scaled: list[int], round_number: int):
        """n_i and θ encrypted, with their range proofs."""
        return proven_upload.build(self.own.public_key, self.parameters, records, scaled,
                                   proven_upload.context(self.session_id, self.own.id, round_number))

    @handles("decryption_request")
    def partially_decrypt(self, sender: Identity, body: du_pb2.DuDecryptionRequest) -> list[Outbound]:
        """Secure aggregation: this holder's proven partial decryption of a round's weighted sum."""
        return [Outbound(AGGREGATOR, "partial_decryptions", self._partials(body))]

    def _partials(self, body: du_pb2.DuDecryptionRequest) -> du_pb2.DuPartialDecryptions:
        p = self.parameters
        if not p.secure_aggregation:
            raise precondition("this run has no secure aggregation")
        if body.round >= self.next_round or body.round in self.decrypted:
            raise precondition(f"round {body.round} is not awaiting this holder's decryption (replay or early)")
        count = encoding.layout(p, self.own.public_key.n).plaintexts_needed(encoding.values(p))
        partials = proven_partials(self.own, body.request, SumSlot.of("du", self.session_id, p, body.round), p.parties,
                                   p.min_contributors, count,
                                   proof_context("du", self.session_id, body.round))
        self.decrypted.add(body.round)
        self._release()
        return du_pb2.DuPartialDecryptions(round=body.round, partials=partials)

    def on_deadline(self) -> list[Outbound]:
        if time.monotonic() - self._heard > self.patience_s:
            self.abort("the server fell silent")
        return []

    def test_record(self) -> tuple[str, object] | None:
        if not self.uploads:
            return None
        return "test_record", du_pb2.DuTestRecord(uploads=np.concatenate(self.uploads).tolist(),
                                                  rounds=len(self.uploads))


def protocol(resources: Callable[[Identity], PartyResources]) -> RoleProtocol:
    """The party's registry entry: the server's first `model` (round 0) opens a party's side."""

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body) -> DuPartySide:
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not open a Du run at a party; the server does")
        own = resources(me)
        parameters = DuParameters.from_proto(body.parameters)
        own.check_opening("du", session_id, parameters, body.client_signature)
        check_key_id(own.public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        if body.round != 0 or body.final:
            raise precondition("a Du run opens with round 0")
        own.admit(session_id, "du", accounting.guarantee(parameters))  # its own policy, before any work on its data
        if not 1 <= own.id <= parameters.parties:
            raise invalid(f"party {own.id} is not among the run's {parameters.parties} parties")
        if parameters.dimension != own.features.shape[1]:
            raise invalid(f"the run declares d = {parameters.dimension}; this party's data has "
                          f"{own.features.shape[1]} features")
        if len(own.labels) == 0 or not set(np.unique(own.labels)) <= {0, 1}:
            raise invalid("Du's logistic regression needs labels in {0, 1}")
        steps = parameters.rounds * parameters.local_epochs * -(-len(own.labels) // parameters.batch_size)
        if steps > MAX_RUN_STEPS:
            raise invalid(f"{steps} local steps in the run exceed {MAX_RUN_STEPS}: fewer rounds or epochs, or "
                          "larger batches")
        if not 0 < body.round_deadline_seconds <= MAX_ROUND_DEADLINE_S:
            raise invalid(f"the round deadline must be in (0, {MAX_ROUND_DEADLINE_S}] seconds")
        if body.noise_seed and not own.test_mode:
            raise invalid("a noise seed is for test mode only")
        if parameters.secure_aggregation:
            encoding.layout(parameters, own.public_key.n)  # the slot widths must fit
        side = own.side(DuPartySide)(session_id, own, parameters, body.round_deadline_seconds, body.noise_seed)
        side.charge = own.spend(session_id, "du", accounting.guarantee(parameters))  # before the first upload
        return side

    return RoleProtocol("du", du_pb2.DuMessage, frozenset({"model"}), open_side, (DuPartySide,),
                        frozenset({"model", "decryption_request"}))
