"""gRPC's fork handlers off, for a process that starts others: every role and the launcher start child processes
(role servers, the accountant) with fork + exec while gRPC threads run, and the handlers restart a poller in the
child before exec, which can die on the closed epoll fd (grpc/grpc#43055). Nothing here uses gRPC across a fork.

gRPC reads the setting when it is first imported, so a process's entry calls `disable_grpc_fork_handlers` before
it imports anything that imports grpc: the launcher's package (`mpdp` and every role it starts run through it) and
the Python API's `deploy`. Importing this module changes nothing."""

import os

SETTING = "GRPC_ENABLE_FORK_SUPPORT"


def disable_grpc_fork_handlers() -> None:
    """Turn gRPC's fork handlers off in this process and the children it starts, unless the environment says
    otherwise."""
    os.environ.setdefault(SETTING, "false")
