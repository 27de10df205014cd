"""The Lightning Trainer's own limits on the settings under ``trainer.*``, checked from the config.

Lightning refuses a value like ``trainer.max_steps=-5`` only when the Trainer is built, after
the data is prepared, and in a wrapped multi-line error. Each limit here is Lightning's
(``lightning.pytorch.Trainer`` and its loops, as of Lightning 2), stated as what is expected,
so that a bad value is one line naming the key before any work starts. Settings Lightning does
not check are not checked here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from seq2seq_lab.errors import ConfigError

# "DD:HH:MM:SS", Lightning's text form of a duration (max_time, a val_check_interval)
DURATION = re.compile(r"^\d+:\d+:\d+:\d+$")


def _integer(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _optional_integer(least: int) -> Callable[[Any], bool]:
    return lambda value: value is None or _integer(value, least)


def _val_check_interval(value: Any) -> bool:
    """A fraction of an epoch in (0, 1], a number of batches, a duration, or None."""
    if value is None or _integer(value, 1):
        return True
    if isinstance(value, float):
        return 0.0 < value <= 1.0
    return isinstance(value, str) and bool(DURATION.match(value))


def _gradient_clip(value: Any) -> bool:
    return value is None or (
        isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
    )


def _duration(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, Mapping)
        or (isinstance(value, str) and bool(DURATION.match(value)))
    )


# key under trainer -> (accepts the value, what is expected)
LIMITS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "max_steps": (lambda v: _integer(v, -1), "an integer >= 0, or -1 for no limit"),
    "max_epochs": (_optional_integer(-1), "an integer >= 0, or -1 for no limit"),
    "min_steps": (_optional_integer(0), "an integer >= 0, or null"),
    "min_epochs": (_optional_integer(0), "an integer >= 0, or null"),
    "check_val_every_n_epoch": (_optional_integer(1), "an integer >= 1, or null"),
    "val_check_interval": (
        _val_check_interval,
        "a fraction of an epoch in (0, 1], a number of batches >= 1, 'DD:HH:MM:SS', or null",
    ),
    "reload_dataloaders_every_n_epochs": (lambda v: _integer(v, 0), "an integer >= 0"),
    "accumulate_grad_batches": (lambda v: _integer(v, 1), "an integer >= 1"),
    "gradient_clip_val": (_gradient_clip, "a number >= 0, or null"),
    "num_sanity_val_steps": (_optional_integer(-1), "an integer >= 0, or -1 for all"),
    "log_every_n_steps": (_optional_integer(0), "an integer >= 0"),
    "max_time": (_duration, "a duration 'DD:HH:MM:SS', or null"),
}


def check_trainer(trainer: Mapping[str, Any], key: str = "trainer") -> None:
    """Raise ConfigError naming ``trainer.<name>=<value>`` and what Lightning expects for the
    first setting in ``trainer`` (a config's ``trainer`` node) that Lightning would refuse."""
    for name, (accepts, expected) in LIMITS.items():
        if name in trainer and not accepts(trainer[name]):
            raise ConfigError(f"{key}.{name}={trainer[name]}: expected {expected}")
