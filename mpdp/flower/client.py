"""`MpdpMod`: the client side, in the shape of Flower's `secaggplus_mod`. Wrapped around a ClientApp, it answers
the workflow's stages (protocol.py): it reports its party, takes part in the committee's key generation if it
is a member, turns its training result into one signed, encrypted weighted update, and, as a key holder,
decrypts at most one sum per round, and only one of at least `min_contributors` signed contributions.

Its floor on contributors and its committee size are its own (constructor), not the server's: a server that
asks for a sum of one or two uploads, or for a second subset of a round, gets nothing."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import cast

import numpy as np
from flwr.app import ConfigRecord, Context, Message, RecordDict
from flwr.app.message_type import MessageType
from flwr.common import parameters_to_ndarrays
from flwr.compat.common import recorddict_compat as compat

from mpdp.cryptocore.paillier import keyfiles
from mpdp.cryptocore.paillier.threshold import KeyShare, ThresholdPublicKey
from mpdp.flower import holder_state, protocol
from mpdp.flower.bundles import Bundle
from mpdp.flower.channels import ChannelError, Channels, key_digest
from mpdp.flower.noise import clip
from mpdp.privacy.collusion import MIN_CONTRIBUTORS
from mpdp.proto.v1 import common_pb2, threshold_sum_pb2
from mpdp.threshold_sum import decryption, quorums
from mpdp.threshold_sum.binding import signature_for
from mpdp.threshold_sum.codec import ciphertexts_to_proto

STATE = "mpdp.state"  # this node's own record in its Flower context: key share, decrypted rounds, DKG progress


class MpdpMod:
    def __init__(self, bundles: str | Path, committee: int, min_contributors: int = 3, party_of=None):
        """`committee`: parties 1..committee hold key shares. `party_of(context)`: this node's party (default:
        partition-id + 1, as Flower's simulation numbers its nodes)."""
        self.bundles = Path(bundles)
        self.committee = committee
        self.min_contributors = max(MIN_CONTRIBUTORS, min_contributors)
        self.party_of = party_of or (lambda context: int(context.node_config["partition-id"]) + 1)

    def __call__(self, msg: Message, context: Context, call_next) -> Message:
        if msg.metadata.message_type != MessageType.TRAIN or protocol.RECORD not in msg.content.config_records:
            return call_next(msg, context)
        config = msg.content.config_records[protocol.RECORD]
        stage = str(config["stage"])
        bundle = Bundle.load(self.bundles, self.party_of(context))
        state = self._state(context)
        if stage == protocol.SETUP:
            reply = self._setup(bundle, state, str(config["session"]))
        elif stage == protocol.DKG_HELLO:
            reply = self._hello(bundle, state, str(config["session"]), config)
        elif stage == protocol.DKG:
            reply = self._dkg(bundle, state, config)
        elif stage == protocol.TRAIN:
            return self._train(bundle, state, msg, context, call_next, config)
        elif stage == protocol.DECRYPT:
            reply = self._decrypt(bundle, state, config, context)
        else:
            raise ValueError(f"unknown mpdp stage {stage!r}")
        self._save(context, state)
        return Message(RecordDict({protocol.RECORD: ConfigRecord(reply)}), reply_to=msg)

    # --- this node's state -----------------------------------------------------------------------------------

    @staticmethod
    def _state(context: Context) -> dict:
        """Pickled into the node's own Flower context (never sent): Flower keeps it between rounds."""
        record = context.state.config_records.get(STATE)
        return pickle.loads(record["blob"]) if record is not None else {"decrypted": []}  # type: ignore[arg-type]

    @staticmethod
    def _save(context: Context, state: dict) -> None:
        context.state.config_records[STATE] = ConfigRecord({"blob": pickle.dumps(state)})

    def _key(self, bundle: Bundle, state: dict) -> tuple[ThresholdPublicKey | None, KeyShare | None]:
        if "share" in state:
            share = keyfiles.key_share_from_dict(json.loads(state["share"]))
            return share.public, share
        if "public" in state:
            return keyfiles.public_key_from_dict(json.loads(state["public"])), None
        return bundle.public_key(), bundle.key_share()

    # --- stages ----------------------------------------------------------------------------------------------

    def _setup(self, bundle: Bundle, state: dict, session: str) -> dict:
        public, share = self._key(bundle, state)
        reply: dict = {"party": bundle.party, "holder": bundle.party <= self.committee}
        if public is not None and bundle.party <= self.committee:  # the server takes the key from the committee
            reply["public_key"] = json.dumps(keyfiles.public_key_to_dict(public))
            if share is not None:
                reply["key_signature"] = bundle.keys.sign(key_digest(session, public.key_id)).SerializeToString()
        return reply

    def _hello(self, bundle: Bundle, state: dict, session: str, config: ConfigRecord) -> dict:
        if bundle.party > self.committee:
            raise ValueError(f"party {bundle.party} is not on the committee of {self.committee}")
        channels = Channels(bundle.party, session)
        state["dkg"] = {"session": session, "channel": channels.private_bytes, "bits": int(cast(int, config["bits"])),
                        "threshold": int(cast(int, config["threshold"]))}
        return {"party": bundle.party, "hello": channels.hello(bundle.keys)}

    def _dkg(self, bundle: Bundle, state: dict, config: ConfigRecord) -> dict:
        """One stage of the ceremony: open what the others sent, step the holder, seal what it sends."""
        dkg = state["dkg"]
        channels = Channels(bundle.party, dkg["session"], dkg["channel"])
        if "holder" not in dkg:  # the first stage brings every member's hello; later ones reuse them
            senders = [int(s) for s in cast(list[int], config["hello_parties"])]
            dkg["hellos"] = dict(zip(senders, [bytes(h) for h in cast(list[bytes], config["hellos"])]))
            if sorted(senders) != list(range(1, self.committee + 1)):
                raise ChannelError(f"the ceremony's members are {sorted(senders)}, not the committee of {self.committee}")
        channels.accept_hellos(bundle.keys, dkg["hellos"])
        if "holder" not in dkg:
            holder = holder_state.new_holder(bundle.party, self.committee, dkg["threshold"], dkg["bits"])
            outgoing = holder.start()
        else:
            holder = dkg["holder"]
            received = [channels.open(bytes(sealed)) for sealed in cast(list[bytes], config["inbox"])]
            outgoing = holder.receive(received)
        dkg["holder"] = holder
        sealed, recipients = [], []
        for message in outgoing:
            targets = [p for p in range(1, self.committee + 1) if p != bundle.party] if message.recipient == 0 \
                else [message.recipient]
            for to in targets:
                sealed.append(channels.seal(message, to))
                recipients.append(to)
        reply: dict = {"party": bundle.party, "outbox": sealed, "recipients": recipients, "done": False}
        if holder.result is not None:
            state["share"] = json.dumps(keyfiles.key_share_to_dict(holder.result))
            del state["dkg"]
            reply["done"] = True
            reply["public_key"] = json.dumps(keyfiles.public_key_to_dict(holder.result.public))
            reply["key_signature"] = bundle.keys.sign(
                key_digest(dkg["session"], holder.result.public.key_id)).SerializeToString()
        return reply

    def _accept_key(self, bundle: Bundle, state: dict, session: str, config: ConfigRecord) -> None:
        """A non-member takes the committee's key only with every member's signature on it."""
        public = keyfiles.public_key_from_dict(json.loads(str(config["public_key"])))
        signatures = [threshold_sum_pb2.ContributionSignature.FromString(bytes(s))
                      for s in cast(list[bytes], config["key_signatures"])]
        if len(signatures) != self.committee:
            raise ValueError(f"{len(signatures)} committee signatures on the key, need all {self.committee}")
        for member, signature in enumerate(signatures, start=1):
            bundle.keys.check(member, key_digest(session, public.key_id), signature)
        state["public"] = json.dumps(keyfiles.public_key_to_dict(public))

    def _train(self, bundle: Bundle, state: dict, msg: Message, context: Context, call_next,
               config: ConfigRecord) -> Message:
        terms = protocol.RoundTerms.from_json(str(config["terms"]))
        if terms.session != self.session_of(context):
            raise ValueError("the round names another run")
        public, _ = self._key(bundle, state)
        if public is None and "public_key" in config:
            self._accept_key(bundle, state, terms.session, config)
            public, _ = self._key(bundle, state)
        if public is None:
            raise ValueError("no threshold key: provision one or run the committee's key generation")
        del msg.content.config_records[protocol.RECORD]
        start = _flat(compat.recorddict_to_fitins(msg.content, keep_input=True).parameters)
        out = call_next(msg, context)
        fitres = compat.recorddict_to_fitres(out.content, keep_input=True)
        update = _flat(fitres.parameters)
        codec = terms.codec(public.n)
        noise = terms.noise()
        if noise is None:
            plaintexts = codec.encode(update, fitres.num_examples)
        else:  # DP-FedAvg: the clipped delta, unweighted, with this client's Skellam share
            shares = noise.shares(terms.count, terms.fractional_bits, terms.min_contributors, terms.summands)
            plaintexts = codec.encode(clip(update - start, noise.l2_clip), 1.0, shares)
        encryptor = public.encryptor
        ciphertexts = ciphertexts_to_proto(public, [encryptor.encrypt(p) for p in plaintexts])
        signature = signature_for(bundle.keys, terms.slot(public.n), bundle.party, public.key_id, list(ciphertexts.values))
        content = out.content
        for record in content.array_records.values():
            record.clear()  # the plaintext update never leaves the client
        content.config_records[protocol.RECORD] = ConfigRecord({
            "party": bundle.party, "ciphertexts": ciphertexts.SerializeToString(),
            "signature": signature.SerializeToString()})
        self._save(context, state)
        return Message(content, reply_to=msg)

    @staticmethod
    def session_of(context: Context) -> str:
        """The run this node takes part in, as its SuperNode knows it (not as a message claims it)."""
        return str(context.run_id)

    def _decrypt(self, bundle: Bundle, state: dict, config: ConfigRecord, context: Context) -> dict:
        terms = protocol.RoundTerms.from_json(str(config["terms"]))
        if terms.session != self.session_of(context):
            raise ValueError("the request names another run")
        public, share = self._key(bundle, state)
        if share is None or public is None:
            raise ValueError(f"party {bundle.party} holds no key share")
        # With 2t ≤ ℓ + 1 the server and one colluding holder could have two subsets of a round decrypted by
        # disjoint honest holders, and learn one update from their difference: refuse such a key outright.
        quorums.check(public.threshold, public.holders)
        slot = (terms.session, terms.round)
        if list(slot) in [list(s) for s in state["decrypted"]]:
            raise PermissionError(f"party {bundle.party} already decrypted a sum of round {terms.round}")
        request = threshold_sum_pb2.DecryptionRequest.FromString(bytes(config["request"]))  # type: ignore[arg-type]
        needed = max(self.min_contributors, terms.min_contributors)
        codec = terms.codec(public.n)
        aggregate, _ = decryption.check_request(public, request, terms.slot(public.n), bundle.keys,
                                                terms.summands, needed, codec.ciphertext_count)
        state["decrypted"].append(slot)  # before answering: a crash after it must not allow a second subset
        partials = decryption.partial_decryptions(share, aggregate, terms.proof_context())
        return {"party": bundle.party, "partials": partials.SerializeToString()}


def _flat(parameters) -> np.ndarray:
    return np.concatenate([np.ravel(a) for a in parameters_to_ndarrays(parameters)])


def ciphertexts_of(reply: ConfigRecord) -> common_pb2.Ciphertexts:
    return common_pb2.Ciphertexts.FromString(bytes(reply["ciphertexts"]))  # type: ignore[arg-type]
