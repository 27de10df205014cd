"""Has a variant converged, seed by seed? The gate a check reads before it judges a variant.

A variant is converged when every one of its finished runs is; a run k is not when

- **rising**: its late gain g_k (``training/convergence.py``: the rise of its best validation
  BLEU over the last quarter of its updates) is CONVERGED_GAIN or more, or was not measured.
  Each seed counts, not the mean: a mean of 0 / 0.58 / 0 / 1.01 / 0.36 hides the rising seed;
- **stalled**: g_k is below the threshold (or not measured) but its test BLEU ends below
  STALLED_BLEU: a run that stopped learning before it translates anything has stopped, but it
  has not converged to what the model can do;
- **on a plateau**: g_k is below the threshold but its best validation BLEU lies PLATEAU_GAP
  or more below that of its variant's best seed. The attention models learn in two phases, a
  plateau and then a rise (docs/protocol.md); a seed still on the plateau shows no late gain,
  yet a seed of the same model has shown that the plateau ends. E1's Luong at
  `synthetic_v2`, seed 2: late gain 0.00 at 8,000 updates (test 80.33), 90.64 at 32,000.

A diverged run (status ``diverged``) is a recorded result (the stability checks read it): its
late gain counts as any run's, but its score, 0 or its best checkpoint's, is neither a stall
nor a plateau.
"""

from __future__ import annotations

from dataclasses import dataclass

from seq2seq_lab.report.aggregate import Variant, rule_bleu
from seq2seq_lab.training.convergence import MIN_VALIDATIONS, has_converged

# Test BLEU: below it a model translates nothing. One floor for every variant and scale: a
# comparison's own quality floor is set for its reference models, and a variant expected to
# fail (no positions, a vanilla RNN) may end under it having converged.
STALLED_BLEU = 1.0
# BLEU: five times the convergence threshold. A seed this far below its variant's best one,
# with no late gain, ended on a level the same model left on another seed; under it, seeds
# differ as seeds do (E1's converged Transformers at `synthetic_v2`: within 1.5 BLEU).
PLATEAU_GAP = 5.0


@dataclass(frozen=True)
class Unconverged:
    """Why one variant may not be judged as trained: its runs that are rising, stalled or on
    a plateau, each as "seed 2 +1.20", "seed 3 stalled at 0.72 BLEU", "seed 2 on a plateau at
    val 80.9 < 89.1"; ``text()`` in one phrase without ", " or ": " (the
    reasons of several cases are merged on those: ``checks.merged_reasons``)."""

    label: str
    rising: tuple[str, ...] = ()
    stalled: tuple[str, ...] = ()
    plateau: tuple[str, ...] = ()

    def text(self) -> str:
        parts = [*self.rising, *self.stalled, *self.plateau]
        return f"{self.label} ({' / '.join(parts)})"


def unconverged(variant: Variant) -> Unconverged | None:
    """The variant's runs that are not converged (module docstring), or None when every
    finished run is."""
    runs = sorted((r for r in variant.runs if r.finished), key=lambda r: r.seed or 0)
    trained = [r for r in runs if r.status != "diverged"]
    best = max((r.best_val_bleu for r in trained if r.best_val_bleu is not None), default=None)
    rising, stalled, plateau = [], [], []
    for run in runs:
        seed, gain, bleu = run.seed, run.late_val_gain, rule_bleu(run)
        diverged = run.status == "diverged"
        if (
            not diverged
            and bleu is not None
            and bleu < STALLED_BLEU
            and has_converged(gain) is not False
        ):
            stalled.append(f"seed {seed} stalled at {bleu:.2f} BLEU")
        elif gain is None:
            rising.append(f"seed {seed} rise not measured (< {MIN_VALIDATIONS} validations)")
        elif not has_converged(gain):
            rising.append(f"seed {seed} +{gain:.2f}")
        elif not diverged and best is not None and run.best_val_bleu is not None:
            if best - run.best_val_bleu >= PLATEAU_GAP:
                plateau.append(
                    f"seed {seed} on a plateau at val {run.best_val_bleu:.1f} < {best:.1f}"
                )
    if not (rising or stalled or plateau):
        return None
    return Unconverged(variant.label, tuple(rising), tuple(stalled), tuple(plateau))
