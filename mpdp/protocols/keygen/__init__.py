"""The `keygen` protocol: the key holders generate the threshold Paillier key together
(mpdp.cryptocore.dkg, docs/distributed-keygen.md). Each holder runs `holder_side.KeygenHolderSide`; the
client opens the session at every holder and collects the public key they agreed on."""
