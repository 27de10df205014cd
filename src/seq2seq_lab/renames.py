"""Config options renamed since runs were recorded: the one table, read two ways.

A scale is named by its data (``synthetic``, ``multi30k``), not by the machine it was sized for;
the encoder-decoder without attention (Sutskever et al. 2014) is ``plain`` (its family name too),
where ``seq2seq`` named what every model here is. Runs keep the names they were made with (their
results.json, Hydra record and runs.csv are records, never rewritten), so

- readers of recorded runs translate a recorded name with :func:`current` (a run's scale, its
  model family), :func:`current_variant` (a row label built from the model's name, as
  ``${hydra:runtime.choices.model}_${model.cell}``) and :func:`current_override` (the
  command-line overrides a report prints to reproduce a run);
- the entry points stop on an old name given on the command line before Hydra composes
  anything: :func:`check_argv` raises one line, "scale=cpu was renamed: use scale=synthetic".
"""

from __future__ import annotations

from seq2seq_lab.errors import UserError

# group -> {old option name: new option name}
RENAMED: dict[str, dict[str, str]] = {
    "scale": {"cpu": "synthetic", "real_cpu": "multi30k"},
    "model": {"seq2seq": "plain"},
}


def current(group: str, name: str | None) -> str | None:
    """The option's name today: ``current("scale", "cpu") == "synthetic"``; any other name
    (a current one, None) is returned as it is."""
    if name is None:
        return None
    return RENAMED.get(group, {}).get(name, name)


def current_variant(label: str | None) -> str | None:
    """A recorded variant label that starts with a renamed model's name, by today's:
    ``seq2seq`` -> ``plain``, ``seq2seq_lstm`` -> ``plain_lstm``; any other label as it is."""
    if label is None:
        return None
    for old, new in RENAMED["model"].items():
        if label == old or label.startswith(f"{old}_"):
            return new + label[len(old) :]
    return label


def current_override(override: str) -> str:
    """A recorded override with today's option names: ``scale=real_cpu`` -> ``scale=multi30k``,
    ``model=seq2seq,bahdanau`` -> ``model=plain,bahdanau``; any other override as it is."""
    key, sep, value = override.partition("=")
    group = key.lstrip("+~")
    if not sep or group not in RENAMED:
        return override
    return f"{key}=" + ",".join(str(current(group, name)) for name in value.split(","))


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
