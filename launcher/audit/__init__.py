"""`mpdp audit`: the exact and empirical privacy audits of each protocol's releases."""
