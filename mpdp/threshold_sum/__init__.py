"""The threshold sum (crypto.md): vectors encrypted under the threshold key by contributors, summed by
the aggregator (`SumCollector`), partially decrypted with proofs by the key holders (`decryption`), and
verified and combined by the role the calling protocol releases to (`SumCombiner`). Free of gRPC;
protocols embed its messages (threshold_sum.proto) in their own."""
