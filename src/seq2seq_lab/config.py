"""Building objects from Hydra configs, with user errors reported against their config key."""

from __future__ import annotations

from typing import Any

import hydra.utils
from hydra.errors import InstantiationException
from omegaconf import DictConfig, OmegaConf

from seq2seq_lab.errors import ConfigError, UserError


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
