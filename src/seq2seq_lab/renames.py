"""Config options renamed since runs were recorded: the one table, read two ways.

A scale is named by its data (``synthetic``, ``multi30k``), not by the machine it was sized for.
Runs keep the names they were made with (their results.json, Hydra record and runs.csv are
records, never rewritten), so

- readers of recorded runs translate a recorded name with :func:`current` (a run's scale) and
  :func:`current_override` (the command-line overrides a report prints to reproduce a run);
- the entry points stop on an old name given on the command line before Hydra composes
  anything: :func:`check_argv` raises one line, "scale=cpu was renamed: use scale=synthetic".
"""

from __future__ import annotations

from seq2seq_lab.errors import UserError

# group -> {old option name: new option name}
RENAMED: dict[str, dict[str, str]] = {
    "scale": {"cpu": "synthetic", "real_cpu": "multi30k"},
}


def current(group: str, name: str | None) -> str | None:
    """The option's name today: ``current("scale", "cpu") == "synthetic"``; any other name
    (a current one, None) is returned as it is."""
    if name is None:
        return None
    return RENAMED.get(group, {}).get(name, name)


def current_override(override: str) -> str:
    """A recorded override with today's option name: ``scale=real_cpu`` -> ``scale=multi30k``;
    any other override is returned as it is."""
    key, sep, value = override.partition("=")
    group = key.lstrip("+~")
    if not sep or group not in RENAMED:
        return override
    return f"{key}={current(group, value)}"


def check_argv(argv: list[str]) -> None:
    """Raise UserError for the first command-line override that names a renamed option
    (``scale=cpu``, ``+scale=real_cpu``; a sweep's ``scale=cpu,full`` names each)."""
    for arg in argv:
        key, sep, value = arg.partition("=")
        group = key.lstrip("+~")
        if not sep or group not in RENAMED:
            continue
        for name in value.split(","):
            new = RENAMED[group].get(name.strip())
            if new is not None:
                raise UserError(f"{group}={name.strip()} was renamed: use {group}={new}")
