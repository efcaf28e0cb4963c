"""`mpdp up --teachers-per-party T` over real processes: each data owner's process hosts T teachers, one per
disjoint part of its rows, and every one casts its own proven ballot in a DPPP round."""

import json

import numpy as np
import pytest

from launcher.cli import main
from launcher.deployment import processes
from mpdp.deployments.topology import Topology
from mpdp.learning import datasets
from mpdp.protocols.dppp.parameters import DpppParameters

pytestmark = [pytest.mark.slow, pytest.mark.network]


def test_three_owners_with_two_teachers_each_vote_as_six_proven_teachers(tmp_path, capsys, monkeypatch):
    run_dir = tmp_path / "run"
    try:
        assert main(["up", "--parties", "3", "--teachers-per-party", "2", "--bits", "1024", "--run-dir", str(run_dir),
                     "--dataset", "breast-cancer", "--seed", "4", "--budget", "inf"]) == 0
        assert "3 data owners, 2 teachers each" in capsys.readouterr().out
        topology = Topology.load(run_dir / "topology.toml")
        assert len(topology.parties) == 6 and len(topology.hosts) == 3 + 2  # 3 owners, curator, aggregator
        parts = [datasets.load_part(entry.data)[0] for entry in topology.parties]
        rows = [{row.tobytes() for row in x} for x in parts]
        assert all(not (a & b) for i, a in enumerate(rows) for b in rows[i + 1:])  # disjoint parts
        assert sum(len(x) for x in parts) == sum(len(r) for r in rows)
        report_path = tmp_path / "dppp.json"
        assert main(["run", "dppp", "--run-dir", str(run_dir), "--queries", "4", "--assurance", "proven-votes",
                     "--report", str(report_path)]) == 0
        report = json.loads(report_path.read_text())
        assert report["parameters"]["teachers"] == 6 and report["result"]["contributors"] == [1, 2, 3, 4, 5, 6]
        assert not report["result"].get("rejected_votes")
        # one owner's 2 teachers are 2 shares a colluding aggregator removes: N_i = ⌈N/(⌈2/3·6⌉ − 2)⌉, ε counted on 4
        assert report["parameters"]["colluding"] == 2 and report["privacy"]["contributors_counted"] == 4
        share = -(-report["privacy"]["total_tosses_required"] // 2)
        assert report["privacy"]["tosses_per_teacher"] == share + share % 2
        assert np.asarray(report["result"]["labels"]).shape == (4,)
        # every owner's bundle derives c = 2 from its own topology, and refuses a session naming c = 1
        for entry in topology.host_entries:
            if entry.identity.role == "party":
                bundle = processes.RunDirectory(run_dir).bundle(entry.principal)
                assert Topology.load(bundle / "topology.toml").colluding == 2
        lowered = DpppParameters.with_minimal_noise
        monkeypatch.setattr(DpppParameters, "with_minimal_noise",
                            lambda *a, **k: lowered(*a, **{**k, "colluding": 1}))
        capsys.readouterr()
        assert main(["run", "dppp", "--run-dir", str(run_dir), "--queries", "4", "--assurance", "proven-votes"]) != 0
        assert "0 of 6 parties contributed" in capsys.readouterr().err  # every teacher refused to open it
        logs = "".join(path.read_text(errors="replace") for path in run_dir.rglob("*.log"))
        assert "contributors per principal" in logs
    finally:
        processes.down(run_dir)


def test_two_owners_may_not_split_into_teachers(tmp_path, capsys):
    assert main(["up", "--parties", "2", "--teachers-per-party", "3", "--bits", "1024",
                 "--run-dir", str(tmp_path / "run"), "--dataset", "breast-cancer"]) != 0
    assert "at least 3 owners" in capsys.readouterr().err
