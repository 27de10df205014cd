"""Building objects from Hydra configs, with user errors reported against their config key.

``conf/`` is the one home of every setting's default; code outside a Hydra entry point (tests,
benchmarks, notebooks) takes its values from there too, through :func:`compose_train`,
:func:`model_config` and :func:`build_network`, changing only what it is about.
"""

from __future__ import annotations

import functools
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import hydra.utils
from hydra.errors import InstantiationException
from omegaconf import DictConfig, OmegaConf

from seq2seq_lab.checkout import CONF_DIR
from seq2seq_lab.errors import ConfigError, UserError


def run_stamp() -> str:
    """The name Hydra gives a run (``hydra.run.dir``) or sweep (``hydra.sweep.dir``) directory,
    ``${run_stamp:}`` in conf/: start time to the microsecond, then the process id, e.g.
    ``2025-06-01_12-30-45.123456_pid4242``. Names sort by start time, and two runs started
    together on one machine never share one, even within one microsecond (their pids differ).

    Registered with ``use_cache``: every reading within one config (and a sweep's jobs, which
    Hydra gives the launching config's cache) sees the same stamp.
    """
    return f"{datetime.now():%Y-%m-%d_%H-%M-%S.%f}_pid{os.getpid()}"


if not OmegaConf.has_resolver("run_stamp"):
    OmegaConf.register_new_resolver("run_stamp", run_stamp, use_cache=True)


def exact_division(a: int, b: int) -> int:
    """``${div:a,b}`` in conf/: a / b for integers b divides, e.g. d_k = d_model / heads in
    E5's run labels; a ValueError otherwise (a label must not round what the model cannot)."""
    quotient, remainder = divmod(int(a), int(b))
    if remainder:
        raise ValueError(f"${{div:{a},{b}}}: {b} does not divide {a}")
    return quotient


if not OmegaConf.has_resolver("div"):
    OmegaConf.register_new_resolver("div", exact_division)


def hydra_record_dir(output_dir: str, resume: Any) -> str | None:
    """``${hydra_record_dir:${hydra.runtime.output_dir},${oc.select:resume,false}}``, Hydra's
    ``hydra.output_subdir`` in conf/hydra/default.yaml: where Hydra writes a job's record
    (config.yaml, hydra.yaml, overrides.yaml): ``.hydra`` in the job's directory, or nowhere
    (None) when a resumable queue (``resume=true``) comes back to a directory whose run has
    finished. That run is kept as it is (run_dir.continuation), so its record stays the one of
    the pass that trained it, not this pass's (another ``n_jobs``, an override it never ran
    with)."""
    from seq2seq_lab.record.results import FINISHED, read_results  # results -> config: import late

    record = Path(output_dir) / "results.json"
    if resume and record.is_file() and read_results(record).get("status") in FINISHED:
        return None
    return ".hydra"


if not OmegaConf.has_resolver("hydra_record_dir"):
    OmegaConf.register_new_resolver("hydra_record_dir", hydra_record_dir)


def to_plain(config: Any) -> Any:
    """Resolved plain containers (dict/list/scalars): safe in checkpoints and JSON."""
    if isinstance(config, DictConfig) or OmegaConf.is_config(config):
        return OmegaConf.to_container(config, resolve=True)
    return config


def instantiate(config: Any, *, key: str, **kwargs: Any) -> Any:
    """``hydra.utils.instantiate`` that turns a constructor's complaint into a ConfigError
    naming the config key (``model``, ``data``...), instead of a wrapped traceback."""
    try:
        return hydra.utils.instantiate(config, _convert_="all", **kwargs)
    except InstantiationException as error:
        cause = error.__cause__
        if isinstance(cause, UserError):
            raise cause from None
        if isinstance(cause, (ValueError, TypeError)):
            target = (config or {}).get("_target_", "?") if hasattr(config, "get") else "?"
            raise ConfigError(f"{key} ({target}): {cause}") from None
        raise


def compose_train(*overrides: str) -> DictConfig:
    """The ``train`` config as ``python -m seq2seq_lab.train OVERRIDES`` composes it, for code
    that runs outside a Hydra app (a Hydra app already composed, this would reset it)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(CONF_DIR, version_base="1.3"):
        return compose("train", overrides=list(overrides))


def model_config(family: str, **options: Any) -> dict:
    """``cfg.model`` of ``model=<family>`` (the family's own sizes) as a plain dict, with
    ``options`` merged in key by key (``attention={"score": "dot"}`` keeps the other keys)."""
    merged = OmegaConf.merge(family_config(family), options)
    return OmegaConf.to_container(merged, resolve=True)


@functools.cache
def family_config(family: str, scale: str | None = None) -> dict:
    """``cfg.model`` as ``model=<family> [scale=<scale>]`` composes it with no comparison: the
    family's own settings (at the default scale, or at ``scale`` with its model_size file)."""
    overrides = [f"model={family}"] + ([f"scale={scale}"] if scale else [])
    return OmegaConf.to_container(compose_train(*overrides).model, resolve=True)


def build_network(family: str, *, src_vocab_size: int, tgt_vocab_size: int, **options: Any):
    """The family's network from its config with ``options`` merged in (see ``model_config``);
    a constructor's complaint is raised as the ConfigError it is."""
    return instantiate(
        model_config(family, **options),
        key="model",
        src_vocab_size=src_vocab_size,
        tgt_vocab_size=tgt_vocab_size,
    )
