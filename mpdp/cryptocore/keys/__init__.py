"""What every key uses: key ids and checks, key sizes, private key files, contribution signatures."""
