"""An aggregator that lies to the client, for attack tests over real processes: the real aggregator's code and
certificate, with its released DPPP result altered as the session id says (`lie-<kind>-…`):

- labels:  every label moved off the argmax of the histograms;
- inflate: teacher 5's votes dropped on arrival, and 5 contributors claimed;
- deflate: one contributor claimed, the evidence trimmed to its one signed contribution;
- blame:   an honest contributing teacher named as failing its vote proof.

`substitute(deployment)` stops the deployment's aggregator and starts this one in its place (its process is
recorded in the run directory, so the deployment's own stop ends it); `deployment.restart(AGGREGATOR)` brings
the honest one back. Run as `python -m tests.lying_aggregator serve …`, the real CLI's arguments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

LIES = ("labels", "inflate", "deflate", "blame")
DROPPED = 5


def lie_of(session_id: str) -> str | None:
    parts = session_id.split("-")
    return parts[1] if len(parts) > 2 and parts[0] == "lie" and parts[1] in LIES else None


def _install() -> None:
    from aggregator.dppp import DpppAggregatorSide
    from mpdp.proto.v1 import threshold_sum_pb2

    honest_votes, honest_finish = DpppAggregatorSide.collect_votes, DpppAggregatorSide._finish

    def collect_votes(self, sender, body):
        if lie_of(self.session_id) == "inflate" and sender.id == DROPPED:
            self.collector.mark_absent(sender.id, "dropped by the aggregator")
            return self.poll()
        return honest_votes(self, sender, body)

    def finish(self):
        outbound = honest_finish(self)
        result, lie = self.released, lie_of(self.session_id)
        if lie == "labels":
            for index, label in enumerate(result.labels):
                result.labels[index] = (label + 1) % result.classes
        elif lie == "inflate":
            result.contributors[:] = sorted({*result.contributors, DROPPED})
        elif lie == "deflate":
            keep = result.contributors[0]
            result.contributors[:] = [keep]
            contributions = [c for c in result.evidence.request.contributions if c.sender == keep]
            del result.evidence.request.contributions[:]
            result.evidence.request.contributions.extend(contributions)
        elif lie == "blame":
            result.rejected_votes.append(threshold_sum_pb2.RejectedShare(holder=result.contributors[-1],
                                                                         reason="vote proof failed: branch 0"))
        return outbound

    DpppAggregatorSide.collect_votes = collect_votes  # the registry dispatches by name (sessions/side.py)
    DpppAggregatorSide._finish = finish


def substitute(deployment) -> None:
    """Stop the deployment's aggregator; start this one with its arguments; wait until it serves."""
    from launcher.deployment import bundles, processes
    from launcher.deployment.processes import serve_arguments, stop, wait_healthy
    from mpdp.sessions.identity import AGGREGATOR

    run = deployment.run
    pids = json.loads(run.processes.read_text())
    stop({str(AGGREGATOR): pids[str(AGGREGATOR)]})
    arguments = serve_arguments(run.bundle_of(AGGREGATOR) / processes.TOPOLOGY_FILE, AGGREGATOR,
                                deployment.topology.insecure, True, None)
    log = bundles.open_private(run.log_file(AGGREGATOR))
    try:
        process = subprocess.Popen([sys.executable, "-m", "tests.lying_aggregator", *arguments], stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                   cwd=Path(__file__).resolve().parent.parent, umask=bundles.PRIVATE_UMASK,
                                   preexec_fn=processes._role_start(True))  # dies with the test process
    finally:
        os.close(log)
    pids[str(AGGREGATOR)] = process.pid
    run.processes.write_text(json.dumps(pids, indent=2))
    wait_healthy(deployment.topology, {str(AGGREGATOR): process.pid}, run=run, only=AGGREGATOR)


if __name__ == "__main__":
    _install()
    from launcher.cli import main

    sys.exit(main(sys.argv[1:]))
