"""The check before any party spends budget, for every protocol (data-and-metrics.md, "Before any budget is
spent"): the labels the protocol can take; the same model non-private, trained on the evaluator's split (the
pooled party data files, where this launcher started the deployment) and scored on its test rows; and the noise
check's verdict (launcher/common/noise_check.py). When the same model cannot rank the test rows (AUC ≤ 0.55) or the
noise will decide the result, the run stops before the first message to any role, naming the cause (scaling,
λ, ε, M, class balance) and a command that fixes it; `--anyway` runs it regardless.

It reads the evaluator's data only (the operator's, like the baselines); no protocol role sees it, and no
budget is spent on it.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

RANKS = 0.55  # a same-model AUC at or below this does not rank the rows: the run cannot learn them either
IMBALANCED = 0.1  # a minority class below this share is named among the causes
LAMBDA_STEPS = (0.1, 0.01, 0.001, 10.0, 100.0, 1000.0)  # candidate λ (× the one asked) for the fix, nearest first
EPSILON_STEPS = (2.0, 5.0, 10.0)


class Stopped(ValueError):
    """The run was stopped before any party spent budget; the message is the one line the user reads."""


def _same_model(student, regularization: float | None, features, labels):
    from mpdp.learning import evaluation

    if regularization is not None and regularization > 0:
        return evaluation.same_lambda(features, labels, regularization)
    return student(features, labels) if student is not None else None


def _auc(model, client_data: dict) -> float | None:
    from sklearn.metrics import roc_auc_score

    test_x, test_y = client_data["test_features"], client_data["test_labels"]
    if model is None or len(np.unique(test_y)) != 2 or len(getattr(model, "classes_", ())) != 2:
        return None
    scores = (model.decision_function(test_x) if hasattr(model, "decision_function")
              else model.predict_proba(test_x)[:, 1])
    return float(roc_auc_score(test_y, scores))


def labels_refusal(protocol, client_data: dict) -> str | None:
    """The one line when the deployment's labels are not ones the protocol can take."""
    classes = int(client_data["classes"])
    if protocol.binary_only and classes != 2:
        names = ", ".join(str(n) for n in client_data["class_names"].tolist()) if "class_names" in client_data \
            else f"{classes} classes"
        return (f"{protocol.name} takes labels in {{0, 1}} (two classes); this deployment's data set "
                f"{client_data['dataset']} has {classes} ({names}): start one with a two-class label column "
                "(`mpdp up --dataset FILE --label COLUMN`)")
    return None


def _command(protocol: str, args, changes: dict[str, float]) -> str:
    from launcher.common import rerun

    return rerun.command(protocol, args, " ".join(f"--{name} {value:g}" for name, value in changes.items()))


def _fix(protocol, args, topology, client_data: dict, pooled, student,
         ranks_now: bool) -> tuple[dict[str, float], float] | None:
    """The nearest λ, then ε, at which the same model ranks and the noise is at most half its signal:
    ({option: value}, ratio).
    Where the same model does not rank at the λ asked, only a change of λ can fix it."""
    from launcher.common import noise as common_noise
    from launcher.common import noise_check

    regularization = getattr(args, "regularization", None)
    epsilon = getattr(args, "epsilon", None)
    lambdas = [{"regularization": regularization * step} for step in LAMBDA_STEPS] if regularization else []
    epsilons = ([{"epsilon": epsilon * step} for step in EPSILON_STEPS]
                if epsilon is not None and math.isfinite(epsilon) else [])
    candidates = [*lambdas, *epsilons, *({**a, **b} for a in lambdas for b in epsilons)]  # one option before two
    ranks: dict[float, bool] = {}
    for change in candidates:
        if not ranks_now and "regularization" not in change:
            continue
        changed = argparse.Namespace(**{**vars(args), **change})
        check = noise_check.estimate(protocol.name, changed, topology, client_data)
        if check.get("ratio", 0.0) > common_noise.TARGET:  # a fix with a margin: noise at most half the signal
            continue
        if "regularization" in change and pooled is not None:
            if changed.regularization not in ranks:
                auc = _auc(_same_model(student, changed.regularization, *pooled), client_data)
                ranks[changed.regularization] = auc is None or auc > RANKS + 0.05
            if not ranks[changed.regularization]:
                continue
        names = {"regularization": "lambda", "epsilon": "epsilon"}
        return {names[key]: value for key, value in change.items()}, float(check.get("ratio", 0.0))
    return None


def check(protocol, args, topology, client_data: dict, noise: dict, student=None) -> dict:
    """The pre-run verdict (kept in the report as `pre_run_check`); raises `Stopped` unless it may run."""
    from launcher.common import noise_check
    from mpdp.learning import evaluation

    refusal = labels_refusal(protocol, client_data)
    if refusal:  # no `--anyway`: the parties would refuse every upload
        raise Stopped(refusal)
    pooled = evaluation.pooled([entry.data for entry in topology.parties if entry.data])
    record: dict = {"rule": f"stop unless the same model non-private ranks the test rows (AUC > {RANKS}) and the "
                            "noise check passes; --anyway runs regardless"}
    causes: list[str] = []
    ranks_now = True
    regularization = getattr(args, "regularization", None)
    if pooled is None:
        record["same_model"] = "unavailable: the parties' data files are not here"
    else:
        auc = _auc(_same_model(student, regularization, *pooled), client_data)
        record["same_model_auc"] = auc
        if auc is not None and auc <= RANKS:
            ranks_now = False
            tuned = _auc(evaluation.tuned(*pooled), client_data)
            record["tuned_auc"] = tuned
            if tuned is not None and tuned <= RANKS:
                causes.append(f"the data: no logistic regression ranks these test rows (same model AUC {auc:.3f}, "
                              f"tuned {tuned:.3f}): check the label column and the scaling (the schema `up` "
                              "printed; docs/data-and-metrics.md)")
            else:
                what = f"λ = {regularization:g}" if regularization else "the scaling"
                causes.append(f"{what}: the same model non-private ranks the test rows at AUC {auc:.3f}"
                              + (f" (tuned: {tuned:.3f})" if tuned is not None else ""))
    if noise.get("ratio", 0.0) > noise_check.NOISY:
        causes.append(f"the noise: {noise['warnings'][0] if noise.get('warnings') else 'it decides the result'}")
    if not causes:
        record["verdict"] = "runs"
        return record
    minority = float(np.bincount(np.asarray(client_data["test_labels"]).astype(int)).min()
                     / len(client_data["test_labels"]))
    if minority < IMBALANCED:
        causes.append(f"class balance: the minority class is {minority:.1%} of the test rows")
    found = _fix(protocol, args, topology, client_data, pooled, student, ranks_now)
    fix = (f"fix: {_command(protocol.name, args, found[0])} (noise {found[1]:.2g}× its signal)" if found else
           "no λ or ε nearby fixes it: see the causes")
    record.update(verdict="stopped" if not getattr(args, "anyway", False) else "run anyway", causes=causes, fix=fix)
    line = f"{protocol.name} would not learn here: {'; '.join(causes)}; {fix}"
    if not getattr(args, "anyway", False):
        raise Stopped(f"{line}. Nothing was spent; `--anyway` runs it regardless")
    record["warning"] = line
    return record
