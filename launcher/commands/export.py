"""`mpdp export --report R --out FILE`: a session's released model as a scikit-learn estimator file (joblib or
pickle), its deployment's scaling first (mpdp/learning/released.py), so that `predict` on raw rows gives the
classes the report counted. Written only after it reproduces the report's accuracy on the deployment's test
rows; the protocol's part comes from its registry entry (`LauncherProtocol.release`)."""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path

import numpy as np

from launcher.common.options import DEFAULT_RUN_DIR

SUFFIXES = (".joblib", ".pkl", ".pickle")


def exported(report: dict, client_data: dict):
    """The estimator (a scikit-learn Pipeline) and its accuracy on the deployment's scaled test rows."""
    from launcher.registry import PROTOCOLS
    from mpdp.learning import released

    protocol = report.get("protocol")
    entry = PROTOCOLS.get(str(protocol))
    if entry is None or entry.release is None:
        releasing = [name for name, p in PROTOCOLS.items() if p.release is not None]
        raise ValueError(f"a {protocol!r} report has no released model to export; exportable: {', '.join(releasing)}")
    if str(report.get("parameters", {}).get("dataset")) != str(client_data["dataset"]):
        raise ValueError(f"the report is on {report['parameters'].get('dataset')!r}, the deployment's data is "
                         f"{client_data['dataset']!r}: give the --run-dir the session ran on")
    if "raw_scaling" not in client_data:
        raise ValueError("this deployment's client data does not record how its rows were scaled; start it again "
                         "with `mpdp up` to export its releases")
    model = released.pipeline(json.loads(str(client_data["raw_scaling"])), entry.release(report, client_data))
    # The release's own steps on the rows the evaluator scored: the same predictions as the report's figures.
    predictions = model[1:].predict(client_data["test_features"])
    return model, float(np.mean(predictions == client_data["test_labels"]))


def check_out(out: Path) -> None:
    """Before any work: the file's kind from its name."""
    if out.suffix not in SUFFIXES:
        raise ValueError(f"{out}: name a {' or '.join(SUFFIXES)} file to export the model to")


def export(report_path: Path, run_dir: Path, out: Path) -> str:
    """`mpdp export`: the stored report's release, against the deployment in `run_dir`."""
    from launcher.common import client
    from launcher.deployment.processes import RunDirectory

    check_out(out)
    report = json.loads(Path(report_path).read_text())
    return write(report, client.load_client_data(RunDirectory(run_dir).client_data), out)


def write(report: dict, client_data: dict, out: Path) -> str:
    """Write the estimator to `out` (.joblib, or .pkl/.pickle) and say what it reproduces, in one line."""
    check_out(out)
    stated = report.get("result", {}).get("test_metrics", {}).get("accuracy")
    model, accuracy = exported(report, client_data)
    if stated is None or not math.isclose(accuracy, float(stated), abs_tol=1e-12):
        raise ValueError(f"the exported model's test accuracy {accuracy:.4f} is not the report's {stated}: "
                         "give the --run-dir the session ran on; nothing written")
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix == ".joblib":
        import joblib

        joblib.dump(model, out)
    else:
        out.write_bytes(pickle.dumps(model))
    steps = " → ".join(name for name, _ in model.steps)
    return (f"{out}: the {report['protocol']} release as a scikit-learn Pipeline ({steps}); on the deployment's "
            f"test rows it gives the report's accuracy {accuracy:.4f}")


def add_command(commands) -> None:
    """`mpdp export`: its options."""
    export = commands.add_parser("export", help="write a session's released model as a scikit-learn Pipeline "
                                 "(the deployment's scaling, then the release) that predicts on raw rows")
    export.add_argument("--report", type=Path, required=True, help="the session's report (`mpdp run … --report`)")
    export.add_argument("--out", type=Path, required=True, help="model.joblib, or model.pkl (pickle)")
    export.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR,
                        help="the deployment the session ran on (its scaling and test rows)")
    export.set_defaults(handler=command)


def command(args) -> int:
    print(export(args.report, args.run_dir, args.out))
    return 0
