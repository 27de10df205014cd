"""Stop a run once it has converged by the rule every report applies to it.

The reports call a run converged when its late gain (``training/convergence.py``: the rise of
its best validation BLEU b over the last quarter of its updates) is below ``CONVERGED_GAIN``:

    late gain(s) = max_{v : s_v <= s} b_v  -  max_{v : s_v <= 0.75 s} b_v

Here the same rule is read after every validation v (update s_v), on the validations so far,
and the run stops at the first validation where, at ``patience`` validations in a row,

    s_v >= min_updates   and   late gain(s_v) < CONVERGED_GAIN.

``min_updates`` is the plateau guard, and it must be declared per model family from its
learning curves: read online, early in a run, the last quarter is short, and a recurrent
attention model's plateau of flat validation BLEU (docs/protocol.md) meets the rule long
before the model has converged. Replayed on E1's curves at ``synthetic_v2``, the rule alone
stops Luong seeds on the plateau they later rose from, and a guard on the training loss's fall
does not tell that plateau from a converged Transformer (experiments/e1_attention/NOTES.md,
"Stopping at convergence, replayed").

Continued training would, by that rule, no longer change the run's standing, so its remaining
updates are saved; the best-validation checkpoint is tested as in any run. The update budget
(``trainer.max_steps``) stays the hard cap, and ``min_updates`` keeps a run on the plateau the
attention models cross early in training (docs/protocol.md) from stopping there.

A run that meets the rule with its best validation BLEU below ``stalled_bleu`` stopped
learning before it translates anything: it stops too, and is recorded as ``stalled``, not
converged. The run record's ``training.stopped_by`` says which (:attr:`stop_reason`).

A learning-speed comparison ("at equal updates") declares no stopping (``stopping=none``):
every variant then trains its whole budget.
"""

from __future__ import annotations

from typing import Any

import lightning as L

from seq2seq_lab.training.convergence import CONVERGED_GAIN, late_gain


class ConvergenceStopping(L.Callback):
    """Ends training at convergence (module docstring). ``min_updates``: the fewest updates
    before a run may stop; ``patience``: validations in a row that must meet the rule;
    ``stalled_bleu``: the best validation BLEU under which a run meeting it is stalled."""

    def __init__(self, *, min_updates: int, patience: int, stalled_bleu: float) -> None:
        if min_updates < 0 or patience < 1:
            raise ValueError(
                "callbacks.convergence_stopping: min_updates >= 0 and patience >= 1 expected, "
                f"got min_updates={min_updates}, patience={patience}"
            )
        self.min_updates = min_updates
        self.patience = patience
        self.stalled_bleu = stalled_bleu
        self.in_a_row = 0
        self.stop_reason: str | None = None

    def state_dict(self) -> dict[str, Any]:
        return {"in_a_row": self.in_a_row}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.in_a_row = int(state["in_a_row"])

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if trainer.sanity_checking or not hasattr(pl_module, "validations"):
            return
        self.observe(trainer.global_step, pl_module.validations)
        if self.stop_reason is not None:
            trainer.should_stop = True

    def observe(self, step: int, validations: list[list[float]]) -> None:
        """Read the rule after a validation at update ``step`` (``validations``: every
        ``[step, bleu]`` so far); sets :attr:`stop_reason` when the run is to stop."""
        gain = late_gain(validations)
        if step < self.min_updates or gain is None or gain >= CONVERGED_GAIN:
            self.in_a_row = 0
            return
        self.in_a_row += 1
        if self.in_a_row < self.patience:
            return
        best = max(bleu for _, bleu in validations)
        state = "stalled" if best < self.stalled_bleu else "converged"
        self.stop_reason = (
            f"{state}: late gain {gain:.2f} < {CONVERGED_GAIN:g} at update {step:,}, "
            f"{self.patience} validation(s) in a row; best validation BLEU {best:.2f}"
        )
