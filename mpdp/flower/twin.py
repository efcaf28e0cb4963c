"""The in-process twin of a Flower federation: a Grid that hands each message to its node's ClientApp in this
process, with each node's Context kept between rounds as the simulation engine keeps it. The workflow under
test is unchanged; the tests use the twin where Ray's start-up would cost more than the protocol, and play a
hostile server or a vanishing client with it (`drop`)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from types import SimpleNamespace

from flwr.app import Context, Error, Message, RecordDict
from flwr.supercore.task_identity import TaskIdentity

RUN_ID = 4242


class InProcessGrid:
    def __init__(self, client_app, clients: int, run_id: int = RUN_ID):
        for name, value in (("run_id", run_id), ("node_id", 0), ("task_id", 0)):
            setattr(TaskIdentity, name, value)
        self.client_app = client_app
        self.run = SimpleNamespace(run_id=run_id)
        self.contexts = {node: Context(run_id=run_id, node_id=node, state=RecordDict(), run_config={},
                                       node_config={"partition-id": node - 1, "num-partitions": clients})
                         for node in range(1, clients + 1)}
        # drop(node, stage) → True: the node vanishes before answering that stage (it never runs it)
        self.drop: Callable[[int, str], bool] = lambda node, stage: False
        self.sent: list[Message] = []

    def get_node_ids(self):
        return list(self.contexts)

    def send_and_receive(self, messages, *, timeout=None):
        replies = []
        for message in messages:
            self.sent.append(message)
            node = message.metadata.dst_node_id
            record = message.content.config_records.get("mpdp")
            stage = str(record["stage"]) if record is not None else ""
            if self.drop(node, stage):
                continue
            try:  # a copy each way, as serialisation gives each side its own (SecAgg+ pops from what it gets)
                replies.append(copy.deepcopy(self.client_app(copy.deepcopy(message), self.contexts[node])))
            except Exception as error:  # the ClientApp's refusal, as the SuperNode reports it
                replies.append(Message(Error(code=1, reason=f"{type(error).__name__}: {error}"), reply_to=message))
        return replies
