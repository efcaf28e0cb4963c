"""Many sessions at once on one deployment: every one completes."""

import asyncio

from launcher.protocols.dppp import client as dppp_client
from launcher.protocols.pathak.client import run_pathak_session

PATHAK_SESSIONS = 10
DPPP_ROUNDS = 20


def test_ten_pathak_sessions_and_twenty_dppp_rounds_at_once(pool):
    d = pool.get(3)

    async def all_at_once():
        pathak = [run_pathak_session(d.topology, d.client_data, d.pathak_parameters(deadline_seconds=240.0),
                                     session_id=f"concurrent-pathak-{i}") for i in range(PATHAK_SESSIONS)]
        dppp = [dppp_client.run_dppp_session(d.topology, d.client_data, 5.0, 1e-5, 6, deadline_s=240.0,
                                        session_id=f"concurrent-dppp-{i}") for i in range(DPPP_ROUNDS)]
        return await asyncio.gather(*pathak, *dppp, return_exceptions=True)

    outcomes = asyncio.run(all_at_once())
    failures = [repr(o) for o in outcomes if isinstance(o, BaseException)]
    assert not failures, failures[:3]
    assert sum(o["protocol"] == "pathak" for o in outcomes) == PATHAK_SESSIONS
    assert sum(o["protocol"] == "dppp" for o in outcomes) == DPPP_ROUNDS
