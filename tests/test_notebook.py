"""docs/notebooks/quickstart.ipynb runs as written (nbclient, a real kernel) and its outputs hold each protocol's
summary, the baselines figure and the sequence chart."""

from pathlib import Path

import pytest

from launcher.deployment import processes
from launcher.registry import PROTOCOLS

pytestmark = [pytest.mark.slow, pytest.mark.network]  # a deployment and a session of every protocol
NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "notebooks" / "quickstart.ipynb"


def test_the_quickstart_notebook_runs_and_shows_each_protocols_summary(tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="the notebook's test needs nbformat (pip install -e '.[test]')")
    nbclient = pytest.importorskip("nbclient", reason="the notebook's test needs nbclient (pip install -e '.[test]')")
    pytest.importorskip("ipykernel", reason="the notebook's test needs ipykernel (pip install -e '.[test]')")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(notebook, timeout=1200, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.get("outputs", [])]
    assert not [output for output in outputs if output.get("output_type") == "error"]
    text = "".join(output.get("text", "") for output in outputs if output.get("output_type") == "stream")
    assert text.count("privacy asked vs delivered") == len(PROTOCOLS)
    assert text.count("beside its baselines") == len(PROTOCOLS)
    for name in PROTOCOLS:
        assert f"{name} " in text.split("sessions:", 1)[1].splitlines()[0]
    pictures = {kind for output in outputs for kind in output.get("data", {})}
    assert {"image/png", "image/svg+xml"} <= pictures  # the baselines figure and the sequence chart
    assert "session page:" in text
    run_dir = text.split("run directory: ", 1)[1].splitlines()[0]
    assert not [command for command in processes.running_servers() if run_dir in command]  # all stopped
