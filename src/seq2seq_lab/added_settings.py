"""Config options added since runs were recorded whose default is not what the code of that
time did, and the override that makes today's code do it.

A run records its composed config (results.json ``config``) and its command-line overrides.
A run recorded before an option existed lacks it, and the code then behaved as the override
of its :class:`AddedSetting` makes today's code behave; today's default differs (the
Transformer's initialisation, the synthetic task's version). So

- a report's command that reproduces runs carries that override for each option their
  recorded configs lack (:func:`with_added_settings`), and the command makes what the runs
  made; where only some runs of one command lack it (the Transformer among the recurrent
  models of one sweep), a line under the command says which (:func:`partly_added`);
- a checkpoint of that time loads with the same values (checkpoint.py reads :func:`before`).

The sibling table for renamed options is :mod:`seq2seq_lab.renames`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_MISSING = object()


@dataclass(frozen=True)
class AddedSetting:
    key: str  # the dotted config key a run recorded before it lacks
    override: str  # what makes today's code do what the code of that time did
    # the option exists only where the recorded config has these values
    where: tuple[tuple[str, Any], ...]


ADDED: tuple[AddedSetting, ...] = (
    AddedSetting(
        "model.init",
        "model.init=xavier",
        (("model._target_", "seq2seq_lab.models.transformer.network.TransformerNetwork"),),
    ),
    AddedSetting(  # version 2 of the synthetic task; version 1 is a data option of its own
        "data.source.zipf",
        "data=synthetic_v1",
        (
            ("data.source._target_", "seq2seq_lab.data.synthetic.SyntheticSource"),
            ("data.source.task", "translation"),
        ),
    ),
)


def _value(config: dict[str, Any], dotted: str) -> Any:
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _key(override: str) -> str:
    return override.partition("=")[0].lstrip("+~")


def added_overrides(config: dict[str, Any]) -> list[str]:
    """The override of every option of :data:`ADDED` that applies to the recorded ``config``
    and is missing from it; nothing for a config without a record (an empty one)."""
    if not config:
        return []
    return [
        setting.override
        for setting in ADDED
        if all(_value(config, key) == value for key, value in setting.where)
        and _value(config, setting.key) is _MISSING
    ]


def with_added_settings(overrides: list[str], config: dict[str, Any]) -> list[str]:
    """A run's recorded ``overrides`` with :func:`added_overrides` of its ``config``: each
    replaces a recorded override of the same key (``data=synthetic`` -> ``data=synthetic_v1``)
    or comes after them."""
    added = {_key(override): override for override in added_overrides(config)}
    out = [added.pop(_key(override), override) for override in overrides]
    return out + list(added.values())


def partly_added(configs: list[dict[str, Any]]) -> tuple[list[str], dict[str, list[int]]]:
    """(the overrides every one of ``configs`` needs, {override: indices of the configs that
    need it} for those only some need)."""
    needed = [added_overrides(config) for config in configs]
    every = [o for o in needed[0] if all(o in n for n in needed)] if needed else []
    some: dict[str, list[int]] = {}
    for i, overrides in enumerate(needed):
        for override in overrides:
            if override not in every:
                some.setdefault(override, []).append(i)
    return every, some


NOTE_START = "# made before "  # how remake_note's line starts (a command block's comment)


def remake_note(override: str, variants: list[str]) -> str:
    """The line under a command whose ``variants`` only need ``override``."""
    key = override.partition("=")[0]
    labels = ", ".join(sorted(set(variants)))
    return f"{NOTE_START}{key} existed: to remake the {labels} runs, add {override}"


def before(key: str) -> Any:
    """The value runs recorded before ``key`` existed were made with (a key whose override
    sets it: ``before("model.init") == "xavier"``)."""
    for setting in ADDED:
        override_key, _, value = setting.override.partition("=")
        if setting.key == key and override_key == key:
            return value
    raise KeyError(key)
