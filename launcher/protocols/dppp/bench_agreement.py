"""What the key holders' agreement on a slot's one subset costs in a `mpdp bench dppp` round
(docs/bound-decryption.md, "Why one subset per slot"; docs/performance.md).

The holders agree without a message of their own: the layout condition 2t > ℓ + c is checked once, before any key
exists and when a holder starts serving, and what each asked holder then does per slot before its first
exponentiation with its share is `decryption.check_request` — the request's shape, each sender once, every
contribution's signature under the deployment CA, and C = Π contributions — after which its state machine leaves
the decrypting step (the once-per-slot rule). That step is what is timed here, on the round's own request as the
client received it in the evidence (the same contributions and signatures the holders were sent), with one
verifier for the bench's life, as a serving holder keeps its certificates verified for its process's life.

It runs in the bench's process right after each round, so that the machine's load falls on it as on the client's
checks. The share printed beside the round counts the t asked holders' steps one after another (t × one step over
the round's wall time), which ignores that they run at once on the holders' processes: an upper bound of what the
agreement adds to the round."""

from __future__ import annotations

import time

from launcher.protocols import stored_transcript
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.proto.v1 import dppp_pb2
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.threshold_sum import decryption
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot


class AgreementTimer:
    """One key holder's per-slot agreement step, timed on each round's request."""

    def __init__(self, public_key: ThresholdPublicKey, keys: ContributionKeys | None):
        self.public_key = public_key
        self.keys = keys
        self._parameters: dict[str, DpppParameters] = {}  # a holder checks a parameter set's N once

    def _parameters_of(self, encoded: str) -> DpppParameters:
        if encoded not in self._parameters:
            parameters = DpppParameters.from_proto(dppp_pb2.DpppParameters.FromString(stored_transcript.unb64(encoded)))
            parameters.calibrate()
            self._parameters[encoded] = parameters
        return self._parameters[encoded]

    def time(self, report: dict) -> dict:
        """{"wall_s", "cpu_s", "holders"}: one holder's step on the round in `report` (its transcript), and the
        number of holders that took it (those asked: every answer the evidence carries)."""
        stored = report["transcript"]
        p = self._parameters_of(stored["parameters"])
        result = dppp_pb2.DpppRoundResult.FromString(stored_transcript.unb64(stored["result"]))
        slot = SumSlot.of("dppp", str(stored["session_id"]), p)
        count = p.layout(self.public_key.n).plaintexts_needed(p.values)
        wall, cpu = time.perf_counter(), time.thread_time()
        decryption.check_request(self.public_key, result.evidence.request, slot, self.keys, p.teachers,
                                 p.calibration.min_contributors, count)
        return {"wall_s": time.perf_counter() - wall, "cpu_s": time.thread_time() - cpu,
                "holders": len(result.evidence.answers)}
