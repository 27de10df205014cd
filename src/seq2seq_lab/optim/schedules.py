"""Step-wise learning-rate schedules (one optimiser update = one step, counted from 1).

Each schedule maps (step, base_lr, total_steps) to the learning rate of that update, where
base_lr is ``optim.lr``. The Lightning module wraps it in a ``LambdaLR`` stepped after every
update. E4 (comparisons.md) turns on exactly this choice: post-LN needs a warmup, pre-LN not.

The fields have no defaults: their one home is ``conf/schedule/<name>.yaml`` (whose
``warmup_steps`` the scale sets through the top-level ``warmup_steps``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from seq2seq_lab.errors import ConfigError


def _check_warmup(warmup_steps: int) -> None:
    if warmup_steps < 0:
        raise ConfigError(f"schedule.warmup_steps must be >= 0, got {warmup_steps}")


@dataclass(frozen=True)
class Constant:
    """lr(step) = base_lr: no warmup, no decay."""

    def lr(self, step: int, base_lr: float, total_steps: int | None = None) -> float:
        return base_lr


@dataclass(frozen=True)
class InverseSqrt:
    """Linear warmup, then inverse square-root decay (fairseq's ``inverse_sqrt``):

    lr(step) = base_lr * step / w                for step < w
    lr(step) = base_lr * sqrt(w / step)          for step >= w
    The peak, base_lr, is reached at step w. With w = 0: lr = base_lr / sqrt(step).

    ``linear_warmup=False`` holds the peak for the first w steps instead of ramping up to it:
    the same schedule without its warmup, the contrast E4 needs (decay unchanged).
    """

    warmup_steps: int
    linear_warmup: bool

    def __post_init__(self) -> None:
        _check_warmup(self.warmup_steps)

    def lr(self, step: int, base_lr: float, total_steps: int | None = None) -> float:
        w = self.warmup_steps
        if w == 0:
            return base_lr / math.sqrt(step)
        if step < w:
            return base_lr * step / w if self.linear_warmup else base_lr
        return base_lr * math.sqrt(w / step)


@dataclass(frozen=True)
class Noam:
    """Vaswani et al. 2017, eq. (3): lr = factor * d_model^-0.5 * min(step^-0.5, step * w^-1.5).

    The formula sets the learning rate by itself: ``optim.lr`` is ignored (use ``factor`` to
    scale). The peak, factor * (d_model * w)^-0.5, is reached at step w.
    """

    d_model: int
    warmup_steps: int
    factor: float

    def __post_init__(self) -> None:
        _check_warmup(self.warmup_steps)
        if self.warmup_steps == 0:
            raise ConfigError("schedule=noam needs schedule.warmup_steps > 0")

    def lr(self, step: int, base_lr: float, total_steps: int | None = None) -> float:
        return self.factor * self.d_model**-0.5 * min(step**-0.5, step * self.warmup_steps**-1.5)


@dataclass(frozen=True)
class WarmupDecay:
    """Linear warmup to base_lr over w steps, then linear or cosine decay to
    min_ratio * base_lr at the last step N (``total_steps``, from the trainer):

    linear: lr = base_lr * (r + (1 - r) * (1 - p)),  cosine: lr = base_lr * (r + (1 - r) *
    (1 + cos(pi * p)) / 2),  with p = (step - w) / (N - w) clipped to [0, 1], r = min_ratio.
    """

    warmup_steps: int
    decay: str
    min_ratio: float

    def __post_init__(self) -> None:
        _check_warmup(self.warmup_steps)
        if self.decay not in ("linear", "cosine"):
            raise ConfigError(f"schedule.decay must be linear or cosine, got {self.decay!r}")

    def lr(self, step: int, base_lr: float, total_steps: int | None = None) -> float:
        w = self.warmup_steps
        if step < w:
            return base_lr * step / w
        if not total_steps or total_steps <= w:
            return base_lr
        p = min(1.0, (step - w) / (total_steps - w))
        shape = 1.0 - p if self.decay == "linear" else (1.0 + math.cos(math.pi * p)) / 2.0
        return base_lr * (self.min_ratio + (1.0 - self.min_ratio) * shape)


def lambda_scheduler(
    optimizer: torch.optim.Optimizer, schedule: Any, total_steps: int | None = None
) -> torch.optim.lr_scheduler.LambdaLR:
    """A ``LambdaLR`` (stepped after every update) that gives update k = 1, 2, ... the
    learning rate ``schedule.lr(k, base_lr, total_steps)`` for each parameter group."""
    base_lrs = [group["lr"] for group in optimizer.param_groups]
    # LambdaLR evaluates index 0 for the first update, so the formula's step is index + 1.
    lambdas = [(lambda i, b=b: schedule.lr(i + 1, b, total_steps) / b) for b in base_lrs]
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambdas)
