"""`--config FILE.toml` on `up`, `run`, `demo` and `experiment`: the file's settings become the command's defaults
(argparse's `set_defaults`), so a flag given on the command line wins, and a setting means exactly what its flag
means (the same type check, choices and destination).

A key is an option's name without its dashes (`epsilon`, `run-dir`; `run_dir` too); a table prefixes its keys
(`[dppp] epsilon = 2` in a demo's file is `--dppp-epsilon 2`). A key no option of the command has is one error
line naming it and the file.
"""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path

OPTION = "--config"
COMMANDS = ("up", "run", "demo", "experiment")


class ConfigError(ValueError):
    """A config file the command cannot take: its one line names the file and the key."""


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(OPTION, type=Path, metavar="FILE.toml",
                        help="settings of this command's options from a TOML file (`epsilon = 2`, `run-dir = "
                             "\"run\"`); a flag on the command line wins; docs/commands.md")


def _flatten(table: dict, prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for key, value in table.items():
        name = f"{prefix}-{key}" if prefix else str(key)
        if isinstance(value, dict):
            flat |= _flatten(value, name)
        else:
            flat[name] = value
    return flat


def chosen_parser(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The sub-parser (`run dppp`, `experiment hamm`, …) the leading words of `argv` choose: the commands that take
    `--config` have no option before their last sub-command."""
    words = iter(argv)
    while True:
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        word = next(words, None)
        if not actions or word not in actions[0].choices:
            return parser
        parser = actions[0].choices[word]


def _convert(parser: argparse.ArgumentParser, action: argparse.Action, value, where: str):
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse.BooleanOptionalAction)):
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: must be true or false, not {value!r}")
        return value if not isinstance(action, argparse._StoreFalseAction) else not value
    many = isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*")
    if many != isinstance(value, list):
        raise ConfigError(f"{where}: must be {'a list' if many else 'one value'}, not {value!r}")
    values = value if many else [value]
    converted = []
    for item in values:
        if isinstance(item, (dict, list)):
            raise ConfigError(f"{where}: {item!r} is not a value this option takes")
        text = str(item).lower() if isinstance(item, bool) else str(item)
        try:
            result = parser._get_value(action, text)
        except argparse.ArgumentError as error:
            raise ConfigError(f"{where}: {error.message}") from None
        if action.choices is not None and result not in action.choices:
            raise ConfigError(f"{where}: {item!r} is not one of {', '.join(map(str, action.choices))}")
        converted.append(result)
    return converted if many else converted[0]


def defaults(parser: argparse.ArgumentParser, path: Path) -> dict[str, object]:
    """The file's settings as `parser`'s defaults (by destination), each checked as its flag would be."""
    try:
        table = tomllib.loads(Path(path).read_text())
    except OSError as error:
        raise ConfigError(f"{path}: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not TOML: {error}") from None
    options = {option.lstrip("-"): action for action in parser._actions for option in action.option_strings
               if option.startswith("--") and action.dest not in ("help", "config")}
    found: dict[str, object] = {}
    for key, value in _flatten(table).items():
        action = options.get(key) or options.get(key.replace("_", "-"))
        if action is None or action.help == argparse.SUPPRESS:
            known = ", ".join(sorted(name for name, a in options.items() if a.help != argparse.SUPPRESS))
            raise ConfigError(f"{path}: unknown setting {key!r} for `{parser.prog}` (it takes: {known})")
        found[action.dest] = _convert(parser, action, value, f"{path}: {key}")
    return found


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """`parser.parse_args(argv)`, with a `--config` file's settings as the chosen command's defaults."""
    chosen = chosen_parser(parser, argv)
    if not any(OPTION in action.option_strings for action in chosen._actions):
        return parser.parse_args(argv)
    finder = argparse.ArgumentParser(add_help=False)
    finder.add_argument(OPTION, type=Path)
    path = finder.parse_known_args(argv)[0].config
    if path is None:
        return parser.parse_args(argv)
    settings = defaults(chosen, path)  # a ConfigError: the caller's one line (text or JSON)
    for action in chosen._actions:
        if action.dest in settings:
            action.required = False  # the file gives it
    chosen.set_defaults(**settings)
    args = parser.parse_args(argv)
    args.config_settings = {"path": str(path), "settings": _flatten(tomllib.loads(Path(path).read_text()))}
    return args


def record(args: argparse.Namespace) -> dict:
    """What a report keeps of the configuration it ran: every option's value, and the file's settings if any."""
    skipped = {"handler", "config", "config_settings", "json_report", "format"}
    options = {key: value if isinstance(value, (bool, int, float, str, type(None))) else str(value)
               for key, value in sorted(vars(args).items()) if key not in skipped and not callable(value)}
    return {"options": options, **({"file": args.config_settings} if getattr(args, "config_settings", None) else {})}
