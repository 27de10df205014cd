"""A nested config as flat dotted keys."""

from __future__ import annotations

from typing import Any


def flatten(config: dict, prefix: str = "") -> dict[str, Any]:
    """{"model.d_model": 256, ...}: W&B groups, filters and parameter importance need flat keys."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat
