import mpdp.wire.fork_handling  # noqa: F401  (before any launcher module imports grpc)
