"""What every floor may use of the operating system: below the cryptography, the accounting and the learning."""
