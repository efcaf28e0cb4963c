from mpdp.wire.fork_handling import disable_grpc_fork_handlers

# Every process the launcher runs (`mpdp`, each role's `python -m launcher.cli serve`) starts here, before any
# launcher module imports grpc, and starts children while gRPC threads run.
disable_grpc_fork_handlers()
