"""What a workflow costs on the wire: a Grid wrapper counting round trips (`send_and_receive` calls) and the
serialised bytes of every message each way, per server round. The same wrapper around SecAgg+ and mpdp's
workflow makes the comparison in docs/flower.md one measurement, not two methods."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from flwr.app import Message
from flwr.common.serde import recorddict_to_proto


def message_bytes(message: Message) -> int:
    """The content as its protobuf encoding (what the SuperLink stores and forwards), metadata aside."""
    return 0 if message.has_error() else recorddict_to_proto(message.content).ByteSize()


@dataclass
class RoundCost:
    round: int
    round_trips: int = 0
    messages: int = 0
    bytes_to_clients: int = 0
    bytes_from_clients: int = 0
    stages: list[str] = field(default_factory=list)


class CountingGrid:
    """Delegates to a Grid; `costs[r]` is round r's traffic (round 0: once-per-run setup and key generation)."""

    def __init__(self, grid):
        self._grid = grid
        self.costs: dict[int, RoundCost] = {}
        self.round = 0

    def __getattr__(self, name):
        return getattr(self._grid, name)

    def cost(self) -> RoundCost:
        return self.costs.setdefault(self.round, RoundCost(self.round))

    def send_and_receive(self, messages, *args, **kwargs):
        messages = list(messages)
        replies = list(self._grid.send_and_receive(messages, *args, **kwargs))
        cost = self.cost()
        cost.round_trips += 1
        cost.messages += len(messages) + len(replies)
        cost.bytes_to_clients += sum(message_bytes(m) for m in messages)
        cost.bytes_from_clients += sum(message_bytes(m) for m in replies)
        return replies

    def report(self) -> list[dict]:
        return [asdict(self.costs[r]) for r in sorted(self.costs)]


class CountedWorkflow:
    """A fit workflow (SecAgg+ or mpdp's) with its traffic counted per round in `grid.costs`."""

    def __init__(self, workflow):
        self.workflow = workflow
        self.grid: CountingGrid | None = None

    def __call__(self, grid, context) -> None:
        from flwr.server.workflow.constant import MAIN_CONFIGS_RECORD, Key

        if self.grid is None:
            self.grid = CountingGrid(grid)
        self.grid.round = int(context.state.config_records[MAIN_CONFIGS_RECORD][Key.CURRENT_ROUND])
        self.workflow(self.grid, context)
