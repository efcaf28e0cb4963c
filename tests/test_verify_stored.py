"""`mpdp verify` on every stored result under docs/results/ (docs/client-checks.md, "Stored results"): what each
file is and how far it verifies. The DPPP, Hamm and Pathak baselines carry their transcripts, so what each
protocol's report may show is repeated from it (for DPPP every signature, proof, label and the delivered ε);
Du's stored runs (in the clear) are checked as far as they allow."""

from pathlib import Path

import pytest

from launcher.commands import verify

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
# A stored transcript's certificates are judged at its session's time (client-checks.md), so these verdicts last.
EXPECTED = {
    **{f"baselines/{data}_{protocol}.json": "verified"
       for data in ("a9a", "breast-cancer") for protocol in ("dppp", "hamm", "pathak")},
    # Du's stored runs send their uploads in the clear: nothing the client checks, so no transcript; their
    # privacy line is recomputed from the parameters they state.
    **{f"baselines/{data}_du.json": "consistent without a transcript" for data in ("a9a", "breast-cancer")},
}


def _verdict(path: Path) -> str:
    try:
        verify.verify_file(path)
    except verify.NotVerifiable as error:
        return str(error)
    except ValueError as error:
        return f"fails: {error}"
    return "verified" if verify.has_transcript(path) else "consistent without a transcript"


@pytest.mark.parametrize("path", sorted(RESULTS.rglob("*.json")), ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_stored_result_verifies_as_far_as_it_can(path):
    name = str(path.relative_to(RESULTS))
    verdict = _verdict(path)
    if EXPECTED.get(name) in ("verified", "consistent without a transcript"):
        assert verdict == EXPECTED[name]
    elif name in EXPECTED:
        assert EXPECTED[name] in verdict
    else:  # experiments, benchmarks and audits: figures, not one session's release
        assert "is not a session report" in verdict


def test_every_pinned_result_is_stored():
    assert sorted(name for name in EXPECTED if not (RESULTS / name).exists()) == []
