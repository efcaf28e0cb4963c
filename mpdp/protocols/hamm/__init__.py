"""Hamm–Cao–Belkin 2016 (spec hamm.md): the parties' votes on Charlie's public auxiliary data are counted
under the threshold key; Charlie trains a global classifier from the counts and releases it with output
perturbation. What the roles' sides share: parameters, Charlie's training and release, the reference."""
