"""Config options added since runs were recorded whose default is not what the code of that
time did, or whose default a comparison has changed since, and the override that makes
today's code do what the runs' code did.

A run records its composed config (results.json ``config``) and its command-line overrides.
A run recorded before an option existed lacks it, and the code then behaved as the override
of its :class:`AddedSetting` makes today's code behave; today's default differs (the
Transformer's initialisation, the synthetic task's version). A comparison that changes a
family's default at one scale (its ``families/<model>_<scale>.yaml``) leaves its earlier runs
with the old value recorded but on no command line: E1's Luong at multi30k, whose score is
scaled since the collapse study. So

- a report's command that reproduces runs carries that override for each option their
  recorded configs lack or hold at the old value (:func:`with_added_settings`), and the
  command makes what the runs made; where only some runs of one command need it (the
  Transformer among the recurrent models of one sweep), a line under the command says which
  (:func:`partly_added`);
- a checkpoint of that time loads with the same values (checkpoint.py reads :func:`before`).

The sibling table for renamed options is :mod:`seq2seq_lab.renames`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_MISSING = object()
_BOOLEANS = {"true": True, "false": False}  # an override's booleans, as the config reads them


@dataclass(frozen=True)
class AddedSetting:
    key: str  # the dotted config key a run recorded before it lacks
    override: str  # what makes today's code do what the code of that time did
    # the option exists only where the recorded config has these values
    where: tuple[tuple[str, Any], ...]
    # the scales whose default changed (a comparison's family file); () for an added option,
    # whose old behaviour is the key's absence at every scale
    scales: tuple[str, ...] = ()
    # what the note under a command says the runs were made before
    made_before: str = ""

    def applies(self, config: dict[str, Any], scale: str | None) -> bool:
        """Whether a run of ``config`` at ``scale`` was made with this override's value and
        its command would not say so: the key absent, or (a changed default) at the old
        value."""
        if not all(_value(config, key) == value for key, value in self.where):
            return False
        recorded = _value(config, self.key)
        if not self.scales:
            return recorded is _MISSING
        old = _as_config(self.override.partition("=")[2])
        return scale in self.scales and (recorded is _MISSING or recorded == old)

    @property
    def note(self) -> str:
        return self.made_before or f"{self.key} existed"


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
    AddedSetting(  # experiments/e1_attention/families/luong_multi30k.yaml
        "model.attention.scaled",
        "model.attention.scaled=false",
        (
            ("experiment_name", "e1_attention"),
            ("model._target_", "seq2seq_lab.models.recurrent.luong.LuongNetwork"),
        ),
        scales=("multi30k",),
        made_before="E1 scaled Luong's score at multi30k",
    ),
)


def _value(config: dict[str, Any], dotted: str) -> Any:
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _as_config(value: str) -> Any:
    """An override's value as the config reads it (``"false"`` -> False)."""
    return _BOOLEANS.get(value, value)


def _key(override: str) -> str:
    return override.partition("=")[0].lstrip("+~")


def added_overrides(config: dict[str, Any], scale: str | None = None) -> list[str]:
    """The override of every option of :data:`ADDED` that applies to a run of the recorded
    ``config`` at ``scale`` (today's name); nothing for a config without a record (an empty
    one)."""
    if not config:
        return []
    return [setting.override for setting in ADDED if setting.applies(config, scale)]


def with_added_settings(
    overrides: list[str], config: dict[str, Any], scale: str | None = None
) -> list[str]:
    """A run's recorded ``overrides`` with :func:`added_overrides` of its ``config``: each
    replaces a recorded override of the same key (``data=synthetic`` -> ``data=synthetic_v1``)
    or comes after them."""
    added = {_key(override): override for override in added_overrides(config, scale)}
    out = [added.pop(_key(override), override) for override in overrides]
    return out + list(added.values())


def partly_added(
    configs: list[dict[str, Any]], scales: list[str | None] | None = None
) -> tuple[list[str], dict[str, list[int]]]:
    """(the overrides every one of ``configs`` (runs at ``scales``) needs, {override: indices
    of the configs that need it} for those only some need)."""
    scales = scales if scales is not None else [None] * len(configs)
    needed = [added_overrides(config, scale) for config, scale in zip(configs, scales, strict=True)]
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
    made_before = next(s.note for s in ADDED if s.override == override)
    labels = ", ".join(sorted(set(variants)))
    return f"{NOTE_START}{made_before}: to remake the {labels} runs, add {override}"


def before(key: str) -> Any:
    """The value runs recorded before ``key`` existed were made with (a key whose override
    sets it), as the config reads it: ``before("model.init") == "xavier"``,
    ``before("model.attention.scaled") is False``."""
    for setting in ADDED:
        override_key, _, value = setting.override.partition("=")
        if setting.key == key and override_key == key:
            return _as_config(value)
    raise KeyError(key)
