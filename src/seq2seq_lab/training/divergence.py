"""The divergence rule: when a training run is declared diverged.

A diverged run is a recorded result (``"status": "diverged"``, exit code 0), not a crash, so
the rule must be explicit. It is stated in full in :class:`DivergenceRule`, its one home.
What the rule has seen (L_1 and the current run of steps above the limit) travels in
checkpoints (``state_dict``), so a resumed run judges its steps exactly as the uninterrupted
run would.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from seq2seq_lab.errors import ConfigError


@dataclass
class DivergenceRule:
    """With L_1 the loss of the first training step, r = ``max_loss_ratio`` and
    p = ``patience`` (``module.divergence`` in the config, the one home of both values):

    1. during training (:meth:`check`, every step), the run diverges at step t when

           L_t is not finite,   or   L_s > r * L_1 for every s in (t - p, t];

       training then stops at once;
    2. when training stops for any other reason (early stopping, ``trainer.max_steps``,
       ``trainer.max_time``, ``trainer.max_epochs``, a callback; :meth:`at_end`), the run is
       diverged when its last step T had L_T > r * L_1: the stop cut short the patience that
       would have waited for the loss to come back below the limit, and a model whose loss is
       still r times its untrained loss has not recovered. The reason names what stopped it.

    So a loss that exploded is diverged whatever ended the run; a loss above the limit for a
    while in the middle of a run that came back below it (fewer than p steps) is not.
    """

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

    @property
    def limit(self) -> float | None:
        """r * L_1, or None before the first step."""
        return None if self.first_loss is None else self.max_loss_ratio * self.first_loss

    def state_dict(self) -> dict[str, float | int | None]:
        return {"first_loss": self.first_loss, "steps_above": self.steps_above}

    def load_state_dict(self, state: dict[str, float | int | None]) -> None:
        first_loss = state["first_loss"]
        self.first_loss = None if first_loss is None else float(first_loss)
        self.steps_above = int(state["steps_above"])

    def check(self, loss: float, step: int) -> str | None:
        """Record one step's training loss; the reason once the run has diverged (part 1 of
        the rule), else None."""
        if not math.isfinite(loss):
            return f"non-finite loss ({loss}) at step {step}"
        if self.first_loss is None:
            self.first_loss = loss
        limit = self.max_loss_ratio * self.first_loss
        self.steps_above = self.steps_above + 1 if loss > limit else 0
        if self.steps_above >= self.patience:
            return f"loss {loss:.3g} above {limit:.3g} for {self.steps_above} steps (step {step})"
        return None

    def at_end(self, step: int, stopped_by: str) -> str | None:
        """The reason the run is diverged although ``stopped_by`` (e.g. "early stopping on
        val/bleu") ended training after ``step`` updates (part 2 of the rule), else None."""
        if self.steps_above == 0 or self.limit is None:
            return None
        return (
            f"loss above {self.limit:.3g} ({self.max_loss_ratio:g} x the first step's "
            f"{self.first_loss:.3g}) for the last {self.steps_above} steps when {stopped_by} "
            f"ended training after {step} steps"
        )
