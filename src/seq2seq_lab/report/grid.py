"""An experiment's sweep grid, read from its composed Hydra config.

``experiments/<name>/config.yaml`` lists the grid in ``hydra.sweeper.params`` (key -> Hydra sweep
string, e.g. ``model: plain,bahdanau`` and ``seed: ${seeds}``); the multirun starts one job
per combination of the axes' values, so

    jobs = product over axes of len(values)

where the values are read at a given scale (``${seeds}`` is set by the scale). A command-line
override of a multirun joins the axes as Hydra's basic sweeper merges them: an override of a swept
key replaces that axis (``model.norm=post`` fixes it at one value), any other is one more axis.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf

from seq2seq_lab import experiment_folders
from seq2seq_lab.config import CONF_DIR  # importing config registers its resolvers

SEED = "seed"  # the axis of repetitions, counted apart from the grid's settings


@dataclass(frozen=True)
class Axis:
    key: str  # an override key: "model", "model.cell", "experiment/e3_scores"
    written: str  # the sweep string as the config writes it: "rnn,gru,lstm", "${seeds}"
    values: tuple[str, ...]  # the values at the composed scale


def compose_experiment(name: str, scale: str, overrides: Sequence[str] = ()) -> DictConfig:
    """The config ``python -m seq2seq_lab.train -m experiment=<name> scale=<scale> OVERRIDES``
    composes, Hydra node included and set as the current Hydra config (runtime choices
    resolve)."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(CONF_DIR, version_base="1.3"):
        given = [f"experiment={name}", f"scale={scale}", *overrides]
        cfg = compose("train", overrides=given, return_hydra_config=True)
    HydraConfig.instance().set_config(cfg)
    return cfg


def axes(cfg: DictConfig, overrides: Sequence[str] = ()) -> list[Axis]:
    """The sweep axes of a composed experiment config, in the config's order, with the
    command-line ``overrides`` of a multirun merged in (a later override of a key wins)."""
    params = cfg.hydra.sweeper.params
    written = {str(k): str(v) for k, v in OmegaConf.to_container(params, resolve=False).items()}
    resolved = {str(key): str(params[key]) for key in params}
    parser = OverridesParser.create()
    for override in parser.parse_overrides(list(overrides)):
        key = override.get_key_element()
        written[key] = resolved[key] = override.get_value_string()
    found = []
    for key, value in resolved.items():
        override = parser.parse_override(f"{key}={value}")
        if override.is_sweep_override():
            values = tuple(override.sweep_string_iterator())
        else:
            values = (override.get_value_element_as_str(),)
        found.append(Axis(key, written[key], values))
    return found


def settings(grid: list[Axis]) -> list[list[str]]:
    """The override lists of one seed's jobs: every combination of the non-seed axes."""
    choices = [[f"{a.key}={v}" for v in a.values] for a in grid if a.key != SEED]
    return [list(job) for job in itertools.product(*choices)]


def seeds(grid: list[Axis]) -> tuple[str, ...]:
    """The seed axis's values (none when the grid does not sweep seeds)."""
    return next((a.values for a in grid if a.key == SEED), ())


def grid_settings(
    name: str, scale: str | None, made_with: Sequence[Sequence[str]] = ()
) -> list[list[str]] | None:
    """The settings (override lists, seed excluded) of experiment ``name``'s grid at
    ``scale``; None when there is no such experiment config or scale to compose.

    ``made_with``: each run's recorded overrides. What every run was given besides its own
    setting (a queue's OVERRIDES, such as ``e4_lrs.synthetic_v2=3e-3``, which moves a swept
    value) is composed in, as the sweep composed it."""
    if scale is None or name not in experiment_folders.experiments():
        return None
    if not (Path(CONF_DIR) / "scale" / f"{scale}.yaml").is_file():
        return None
    return settings(axes(compose_experiment(name, scale, shared_overrides(made_with))))


def shared_overrides(made_with: Sequence[Sequence[str]]) -> list[str]:
    """The overrides every one of ``made_with`` holds (in the first's order), less the
    experiment and scale (composed anyway), the seed and ``hydra.*``. A swept key's value
    that every run shares changes nothing: the axes are read from the sweeper's params."""
    if not made_with:
        return []
    first, *rest = made_with
    fixed = ("experiment", "scale", SEED)
    return [
        o
        for o in first
        if all(o in other for other in rest)
        and o.split("=", 1)[0].lstrip("~+") not in fixed
        and not o.startswith(("hydra.", "hydra/"))
    ]
