"""What the launcher's commands and its protocols' entries share: helpers that know no protocol and import
neither the registry nor a command."""
