"""Du–Li–Li 2018: OFPA and OFAA (the paper's calibrations) and their correct counterparts, over rounds of
weighted parameter averaging (du.md)."""
