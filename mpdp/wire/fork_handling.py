"""gRPC's fork handlers off, before gRPC starts: every role and the launcher start child processes (role servers,
the accountant) with fork + exec while gRPC threads run, and the handlers restart a poller in the child before
exec, which can die on the closed epoll fd (grpc/grpc#43055). Nothing here uses gRPC across a fork."""

import os

os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
