"""Config options added since runs were recorded whose default is not what the code of that
time did, or whose default a comparison has changed since, and the override that makes
today's code do what the runs' code did.

A run records its composed config (results.json ``config``) and its command-line overrides.
A run recorded before an option existed lacks it, and the code then behaved as the override
of its :class:`AddedSetting` makes today's code behave; today's default differs (the
Transformer's initialisation, the synthetic task's version). A comparison that changes a
family's setting at one scale (its ``families/<model>_<scale>.yaml``, see
seq2seq_lab/experiment_folders.py) leaves the runs made before that file with another value
recorded, or none, and on no command line: each such setting is a :class:`ChangedDefault`,
read from the file itself, so the library names no comparison. So

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
from functools import cache
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from seq2seq_lab.checkout import CONF_DIR, REPOSITORY
from seq2seq_lab.config import family_config
from seq2seq_lab.experiment_folders import FAMILIES, folders

_MISSING = object()
_BOOLEANS = {"true": True, "false": False}  # an override's booleans, as the config reads them


@dataclass(frozen=True)
class AddedSetting:
    key: str  # the dotted config key a run recorded before it lacks
    override: str  # what makes today's code do what the code of that time did
    # the option exists only where the recorded config has these values
    where: tuple[tuple[str, Any], ...]

    def overrides(self, config: dict[str, Any], scale: str | None) -> list[str]:
        """[the override] for a run of ``config`` made before the option existed, else []."""
        found = all(_value(config, key) == value for key, value in self.where)
        return [self.override] if found and _value(config, self.key) is _MISSING else []

    @property
    def override_key(self) -> str:
        return _key(self.override)

    @property
    def note(self) -> str:
        return f"{self.key} existed"


@dataclass(frozen=True)
class ChangedDefault:
    """A setting a comparison's family file gives one family at one scale
    (``experiments/<experiment>/families/<model>_<scale>.yaml`` sets ``key`` to ``value``)
    where the family's own default at that scale (``model=<model> scale=<scale>`` with no
    comparison: conf/model/ and conf/model_size/) is ``default``. A run of that
    comparison, family and scale recorded without ``key`` or with another value was made
    before the file: its command names the value it was made with (the recorded one, or
    ``default`` where none is recorded)."""

    experiment: str
    target: str  # the family's model._target_, as a run records it
    scale: str
    key: str
    value: Any
    default: Any
    file: str  # the family file, relative to the repository

    def overrides(self, config: dict[str, Any], scale: str | None) -> list[str]:
        if scale != self.scale or config.get("experiment_name") != self.experiment:
            return []
        if _value(config, "model._target_") != self.target:
            return []
        recorded = _value(config, self.key)
        if recorded == self.value:
            return []
        return [f"{self.key}={_as_override(self.default if recorded is _MISSING else recorded)}"]

    @property
    def override_key(self) -> str:
        return self.key

    @property
    def note(self) -> str:
        return self.file


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


# Options added since runs were recorded whose value here does what their absence did (so no
# command needs an override for them): a recorded run without the key is one made with it.
# With ADDED's own keys, the one table of "what the code did before the key existed" that
# checkpoint.py (loading old checkpoints) and record/run_reuse.py (matching jobs to old runs)
# both read through :func:`before`.
AS_BEFORE: dict[str, Any] = {
    "model.attention.scaled": False,  # Luong's own score; a comparison may scale it now
    "model.attention.init_scale": 1.0,  # Luong's W_m as nn.Linear draws it
    "callbacks.last_checkpoint.keep_last": 0,
    "data.first_pairs": {"train": None, "val": None, "test": None},
    "data.max_train_pairs": None,  # gone since: became data.first_pairs.train
}


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


def _as_override(value: Any) -> str:
    """A config value as an override writes it (False -> ``"false"``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _leaves(node: dict[str, Any], prefix: str) -> dict[str, Any]:
    """{dotted key: value} of every leaf under ``node`` (keys start with ``prefix``)."""
    out: dict[str, Any] = {}
    for key, child in node.items():
        if isinstance(child, dict):
            out |= _leaves(child, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = child
    return out


@cache
def changed_defaults() -> tuple[ChangedDefault, ...]:
    """Every model setting of every comparison's family files (``variant``, the report's label,
    and keys the family's own config does not have are no setting it changes)."""
    # longest first: a file luong_synthetic_v2 is at synthetic_v2, not at v2 of luong_synthetic
    scales = sorted((p.stem for p in Path(CONF_DIR, "scale").glob("*.yaml")), key=len, reverse=True)
    found = []
    for name, folder in folders().items():
        for file in sorted((folder / FAMILIES).glob("*.yaml")):
            scale = next((s for s in scales if file.stem.endswith(f"_{s}")), None)
            family = f"{file.stem.removesuffix(f'_{scale}')}"
            if scale is None or not Path(CONF_DIR, "model", f"{family}.yaml").is_file():
                continue
            own = family_config(family, scale)
            model = OmegaConf.to_container(OmegaConf.load(file)).get("model", {})
            for key, value in _leaves(model, "model.").items():
                default = _value({"model": own}, key)
                if default is not _MISSING and default != value:
                    found.append(
                        ChangedDefault(
                            name, own["_target_"], scale, key, value, default, _relative(file)
                        )
                    )
    return tuple(found)


def _relative(file: Path) -> str:
    try:
        return str(file.resolve().relative_to(REPOSITORY))
    except ValueError:  # a comparison kept outside the checkout
        return str(file)


def _key(override: str) -> str:
    return override.partition("=")[0].lstrip("+~")


def added_overrides(config: dict[str, Any], scale: str | None = None) -> list[str]:
    """The overrides that make today's code do what a run of the recorded ``config`` at
    ``scale`` did: of every option of :data:`ADDED` it lacks (today's name) and every
    :func:`changed_defaults` setting it was made before; nothing for a config without a
    record (an empty one)."""
    if not config:
        return []
    return [o for s in (*ADDED, *changed_defaults()) for o in s.overrides(config, scale)]


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
    made_before = next(
        s.note for s in (*ADDED, *changed_defaults()) if s.override_key == _key(override)
    )
    labels = ", ".join(sorted(set(variants)))
    return f"{NOTE_START}{made_before}: to remake the {labels} runs, add {override}"


def before(key: str) -> Any:
    """The value runs recorded before ``key`` existed were made with (an :data:`ADDED` key
    whose override sets it, or an :data:`AS_BEFORE` one), as the config reads it:
    ``before("model.init") == "xavier"``, ``before("model.attention.scaled") is False``."""
    for setting in ADDED:
        override_key, _, value = setting.override.partition("=")
        if setting.key == key and override_key == key:
            return _as_config(value)
    if key in AS_BEFORE:
        return AS_BEFORE[key]
    raise KeyError(key)


def keys_with_before() -> tuple[str, ...]:
    """Every key :func:`before` knows."""
    added = [s.key for s in ADDED if s.override.partition("=")[0] == s.key]
    return (*added, *AS_BEFORE)
