"""Pathak's check before spending, read both ways on one split per setting: the regulariser's bound (what the check
reads without the parties' data) and the operator's preview (launcher/protocols/pathak/preview.py), beside what the
release does over 40 noise draws (AUC and balanced accuracy on the test rows, cut at 0) and the same model
without noise. Writes JSON to the path given; needs a9a under MPDP_DATA_DIR (or --data-dir) for its a9a rows.

    python docs/results/noise-checks/pathak_bound_and_preview.py docs/results/noise-checks/pathak-2026-12-07.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from sklearn.metrics import roc_auc_score

from launcher.common import noise_check
from launcher.protocols.pathak import commands as pathak_commands
from launcher.protocols.pathak import preview
from mpdp.learning import datasets
from mpdp.learning.pathak_local import train

SETTINGS = [  # data set, K, λ, ε, calibration, split
    ("breast-cancer", 5, 0.3, 1.0, "tight", "even"), ("breast-cancer", 5, 0.3, 1.0, "paper", "even"),
    ("breast-cancer", 5, 0.3, 0.3, "tight", "even"), ("breast-cancer", 5, 0.1, 1.0, "paper", "even"),
    ("breast-cancer", 5, 0.3, 1.0, "paper", "10"), ("breast-cancer", 5, 0.05, 1.0, "paper", "even"),
    ("a9a", 32, 0.01, 1.0, "tight", "even"), ("a9a", 32, 0.01, 1.0, "paper", "even"),
    ("a9a", 32, 0.001, 1.0, "paper", "even"), ("a9a", 32, 0.01, 0.1, "paper", "even"),
    ("a9a", 5, 0.001, 0.1, "paper", "10"),
    ("skewed", 3, 0.01, 1.0, "tight", "even"),  # tests/synthetic_table.py, as tests/test_useful_models_network.py
]
DRAWS = 40


def _options(regularization: float, epsilon: float, calibration: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    for option in pathak_commands.session_options():
        option.add_to(parser)
    args = parser.parse_args([])
    args.regularization, args.epsilon, args.calibration = regularization, epsilon, calibration
    return args


def _load(root: Path, name: str) -> datasets.Dataset:
    """A data set by name; `skewed`: the researcher's table the tests make (88 % one class, missing cells)."""
    if name != "skewed":
        return datasets.load(name)
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout's tests/, beside this file's docs/
    from tests import synthetic_table

    table, schema = synthetic_table.write(root / "table.csv"), synthetic_table.write_schema(root / "schema.json")
    return datasets.load(str(table), label="y", schema=str(schema), intercept=True)


def one(root: Path, name: str, parties: int, regularization: float, epsilon: float, calibration: str,
        split_kind: str) -> dict:
    split = datasets.split_for_teachers(_load(root, name), parties, np.random.default_rng(1), split=split_kind)
    directory = root / f"{name}-{parties}-{split_kind}"
    directory.mkdir(exist_ok=True)
    entries = []
    for number, (features, labels) in enumerate(split.teacher_parts, start=1):
        datasets.save_part(directory / f"party_{number}.npz", features, labels, 2)
        entries.append(SimpleNamespace(data=directory / f"party_{number}.npz"))
    sizes = [len(labels) for _, labels in split.teacher_parts]
    client_data = {"test_features": split.test_features, "test_labels": split.test_labels, "classes": 2,
                   "party_sizes": np.array(sizes)}
    args = _options(regularization, epsilon, calibration)
    seen = noise_check.estimate("pathak", args, SimpleNamespace(parties=entries), client_data)
    blind = noise_check.estimate("pathak", args, SimpleNamespace(parties=[SimpleNamespace(data=None)] * parties),
                                 client_data)
    parameters = pathak_commands.parameters(args, parties, split.test_features.shape[1])
    w = np.mean([train(x, y, regularization, parameters.gradient_tolerance) for x, y in split.teacher_parts], axis=0)
    positive = (np.asarray(split.test_labels) == 1)
    aucs, balanced = [], []
    for k in range(DRAWS):
        scores = split.test_features @ (w + preview.noise_vector(parameters, min(sizes), f"experiment/{k}"))
        aucs.append(roc_auc_score(positive, scores))
        balanced.append(0.5 * (np.mean(scores[positive] > 0) + np.mean(scores[~positive] <= 0)))
    return {"data": name, "parties": parties, "lambda": regularization, "epsilon": epsilon,
            "calibration": calibration, "split": split_kind, "smallest_party": min(sizes),
            "bound_ratio": blind["ratio"], "preview_ratio": seen["ratio"],
            "bound_over_preview": blind["ratio"] / seen["ratio"],
            "auc_without_noise": roc_auc_score(positive, split.test_features @ w),
            "release_auc_p10_p50_p90": np.percentile(aucs, [10, 50, 90]).tolist(),
            "release_balanced_accuracy_p10_p50_p90": np.percentile(balanced, [10, 50, 90]).tolist()}


def main() -> int:
    import tempfile

    out = Path(sys.argv[1])
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for setting in SETTINGS:
            if setting[0] == "a9a" and datasets.data_directory() is None:
                print("a9a skipped: MPDP_DATA_DIR is not set", file=sys.stderr)
                continue
            rows.append(one(Path(scratch), *setting))
            row = rows[-1]
            print(f"{row['data']} K={row['parties']} λ={row['lambda']} ε={row['epsilon']} {row['calibration']} "
                  f"split {row['split']}: bound {row['bound_ratio']:.3g}×, preview {row['preview_ratio']:.3g}×, "
                  f"AUC {row['auc_without_noise']:.3f} → median {row['release_auc_p10_p50_p90'][1]:.3f}", flush=True)
    out.write_text(json.dumps({
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": platform.node(),
        "cpus": os.cpu_count(), "command": f"python docs/results/noise-checks/pathak_bound_and_preview.py {out}",
        "draws": DRAWS, "settings": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
