"""A run's training budget in words, from its resolved trainer config: what the console says
before a run trains and what every report states beside its tables."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def training_budget(trainer: Mapping[str, Any]) -> str:
    """ "1,500 updates; validation every 100 updates; wall-clock cap 10 minutes", "up to 40
    epochs" without a budget in updates, "one batch each way (fast_dev_run)" for a smoke."""
    if trainer.get("fast_dev_run"):
        return "one batch each way (fast_dev_run)"
    steps = trainer.get("max_steps")
    parts = (
        [f"{steps:,} updates"]
        if isinstance(steps, int) and steps > 0
        else [f"up to {trainer.get('max_epochs')} epochs"]
    )
    interval = trainer.get("val_check_interval")
    if isinstance(interval, int) and trainer.get("check_val_every_n_epoch") is None:
        parts.append(f"validation every {interval:,} updates")
    cap = trainer.get("max_time")
    if isinstance(cap, Mapping):
        cap = ", ".join(f"{value:g} {unit}" for unit, value in cap.items())
    if cap:
        parts.append(f"wall-clock cap {cap}")
    return "; ".join(parts)
