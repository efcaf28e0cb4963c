"""Each protocol's gRPC-free core: parameters, encodings, state machines, reference computations."""
