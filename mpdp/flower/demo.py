"""The demo federation of examples/flower, the tests and the benchmark: logistic regression in numpy on
synthetic data, one partition per client (sizes differ, so FedAvg's weighting matters), full-batch gradient
descent (deterministic, so a plain FedAvg run and an mpdp run start every round from comparable models)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from flwr.app import Context
from flwr.client import ClientApp, NumPyClient
from flwr.common import ndarrays_to_parameters, parameters_to_ndarrays
from flwr.server import ServerApp, ServerConfig
from flwr.server.compat.legacy_context import LegacyContext
from flwr.server.strategy import FedAvg
from flwr.server.workflow import DefaultWorkflow

FEATURES = 10  # the benchmark sets more to compare costs on a larger model


def partition(index: int, partitions: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed * 1000 + index)
    rows = 40 + 9 * (index % 7)
    x = rng.normal(size=(rows, FEATURES))
    y = (x @ np.linspace(-1.5, 1.5, FEATURES) + 0.3 * rng.normal(size=rows) > 0).astype(float)
    return x, y


def initial_parameters() -> list[np.ndarray]:
    return [np.zeros(FEATURES), np.zeros(1)]


def train(parameters: list[np.ndarray], x: np.ndarray, y: np.ndarray, steps: int = 5,
          rate: float = 0.5) -> list[np.ndarray]:
    weights, bias = parameters[0].copy(), parameters[1].copy()
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ weights + bias[0])))
        weights -= rate * x.T @ (p - y) / len(y)
        bias -= rate * np.array([np.mean(p - y)])
    return [weights, bias]


def accuracy(parameters: list[np.ndarray], partitions: int) -> float:
    rows = [partition(i, partitions) for i in range(partitions)]
    x, y = np.vstack([r[0] for r in rows]), np.concatenate([r[1] for r in rows])
    return float(np.mean(((x @ parameters[0] + parameters[1][0]) > 0) == (y > 0.5)))


class LogisticClient(NumPyClient):
    def __init__(self, index: int, partitions: int):
        self.x, self.y = partition(index, partitions)

    def fit(self, parameters, config):
        return train(parameters, self.x, self.y), len(self.y), {}


def client_app(mods: list | None = None) -> ClientApp:
    def client_fn(context: Context):
        return LogisticClient(int(context.node_config["partition-id"]),
                              int(context.node_config["num-partitions"])).to_client()

    return ClientApp(client_fn=client_fn, mods=mods or [])


def run(grid, context: Context, num_rounds: int, clients: int, fit_workflow=None,
        fraction_fit: float = 1.0) -> list[np.ndarray]:
    """FedAvg for `num_rounds` rounds with `fit_workflow` (None: Flower's plain one); the final model."""
    from flwr.compat.common import recorddict_compat as compat
    from flwr.server.workflow.constant import MAIN_PARAMS_RECORD

    # min_fit_clients as many as the fraction asks of all: FedAvg sizes its sample from the clients connected at
    # that instant, which at a simulation's start may be two of ten.
    strategy = FedAvg(fraction_fit=fraction_fit, fraction_evaluate=0.0, min_fit_clients=max(2, int(clients * fraction_fit)),
                      min_available_clients=clients, initial_parameters=ndarrays_to_parameters(initial_parameters()))
    legacy = LegacyContext(context=context, config=ServerConfig(num_rounds=num_rounds), strategy=strategy)
    DefaultWorkflow(fit_workflow=fit_workflow)(grid, legacy)
    final = compat.arrayrecord_to_parameters(legacy.state.array_records[MAIN_PARAMS_RECORD], keep_input=True)
    return parameters_to_ndarrays(final)


def server_app(num_rounds: int, clients: int, fit_workflow=None,
               on_done: Callable[[list[np.ndarray]], None] | None = None, fraction_fit: float = 1.0) -> ServerApp:
    app = ServerApp()

    @app.main()
    def main(grid, context: Context) -> None:
        final = run(grid, context, num_rounds, clients, fit_workflow, fraction_fit)
        if on_done is not None:
            on_done(final)

    return app
