"""The divergence rule: when a training run is declared diverged.

A diverged run is a recorded result (``"status": "diverged"``, exit code 0), not a crash, so
the rule must be explicit. With L_1 the loss of the first training step, the run diverges at
step t when

    L_t is not finite,   or   L_s > r * L_1 for every s in (t - p, t]

with r = ``max_loss_ratio`` and p = ``patience`` (``module.divergence`` in the config, which
is the one home of both values). What the rule has seen (L_1 and the current run of steps
above the limit) travels in checkpoints (``state_dict``), so a resumed run judges its steps
exactly as the uninterrupted run would.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from seq2seq_lab.errors import ConfigError


@dataclass
class DivergenceRule:
    max_loss_ratio: float
    patience: int
    first_loss: float | None = field(default=None, init=False)
    steps_above: int = field(default=0, init=False)  # consecutive steps above the limit

    def __post_init__(self) -> None:
        if not self.max_loss_ratio > 1.0:
            raise ConfigError(
                f"module.divergence.max_loss_ratio={self.max_loss_ratio}: expected a number > 1"
            )
        if self.patience < 1:
            raise ConfigError(f"module.divergence.patience={self.patience}: expected >= 1")

    def state_dict(self) -> dict[str, float | int | None]:
        return {"first_loss": self.first_loss, "steps_above": self.steps_above}

    def load_state_dict(self, state: dict[str, float | int | None]) -> None:
        first_loss = state["first_loss"]
        self.first_loss = None if first_loss is None else float(first_loss)
        self.steps_above = int(state["steps_above"])

    def check(self, loss: float, step: int) -> str | None:
        """Record one step's training loss; the reason once the run has diverged, else None."""
        if not math.isfinite(loss):
            return f"non-finite loss ({loss}) at step {step}"
        if self.first_loss is None:
            self.first_loss = loss
        limit = self.max_loss_ratio * self.first_loss
        self.steps_above = self.steps_above + 1 if loss > limit else 0
        if self.steps_above >= self.patience:
            return f"loss {loss:.3g} above {limit:.3g} for {self.steps_above} steps (step {step})"
        return None
