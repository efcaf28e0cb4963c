"""`up --keygen distributed`: the key holders' own processes generate the key over mutual TLS, and the four
protocols run on it as on a dealt key."""

import asyncio
import json

import pytest

from launcher.deployment import processes
from launcher.protocols.du.client import run_du_session
from launcher.protocols.du.client import session_parameters as du_parameters
from launcher.protocols.hamm.client import run_hamm_session
from launcher.protocols.hamm.client import session_parameters as hamm_parameters
from mpdp.cryptocore.paillier import keyfiles
from mpdp.learning import datasets
from mpdp.privacy.ledger import UNLIMITED
from mpdp.sessions.identity import party
from tests.deployment import TEST_BITS, TEST_MODEL, Deployment

pytestmark = [pytest.mark.network, pytest.mark.slow]


@pytest.fixture(scope="module")
def distributed(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("keygen") / "run"
    topology = processes.up(run_dir, 3, TEST_BITS, datasets.load("breast-cancer"), seed=7, model=TEST_MODEL,
                            test_mode=True, keygen="distributed", foreground=True, budget=UNLIMITED)
    try:  # four protocols' sessions on one deployment: no budget to keep
        yield Deployment(run_dir, topology, UNLIMITED)
    finally:
        processes.down(run_dir)


def test_the_key_files_come_from_the_holders_and_pass_validation(distributed):
    """Share j only in holder j's bundle, the same public key in every bundle."""
    run = distributed.run
    public = keyfiles.load_public_key(distributed.topology.public_key)
    assert public.holders == 3 and public.n.bit_length() == TEST_BITS
    for bundle in sorted(path for path in run.path.iterdir() if path.is_dir()):
        assert json.loads((bundle / keyfiles.PUBLIC_KEY_FILE).read_text())["key_id"] == public.key_id.hex()
    shares = []
    for j in (1, 2, 3):
        bundle = run.bundle(party(j))
        assert [p.name for p in bundle.glob("key_share_*")] == [keyfiles.share_file_name(j)]
        shares.append(keyfiles.load_key_share(bundle / keyfiles.share_file_name(j)))
    # integer shares of a dealerless key exceed n² (a dealer's are below n·m < n²)
    assert any(share.secret >= public.paillier.nsquare for share in shares)


def test_the_four_protocols_run_on_a_distributed_key(distributed):
    d = distributed
    dppp = d.run_dppp(queries=4)
    assert len(dppp["result"]["labels"]) == 4 and not dppp["result"]["rejected_shares"]
    pathak = d.run_pathak()
    assert pathak["result"]
    parameters = hamm_parameters(d.topology, d.client_data, "soft", 2.0, 1e-5, 0.01, False)
    hamm = asyncio.run(run_hamm_session(d.topology, d.client_data, parameters, deadline_s=60.0, noise_seed=9))
    assert hamm["result"]
    parameters = du_parameters(d.topology, d.client_data, "functional", 1.0, 2, False, local_epochs=10)
    du = asyncio.run(run_du_session(d.topology, d.client_data, parameters, 300.0, noise_seed=7))
    assert du["result"]
