"""Has a run stopped improving? The comparison protocol's convergence check.

Over a run's validations v (update step s_v, validation BLEU b_v), with S the last update
validated and f = ``LATE_FRACTION``:

    late gain = max_v b_v  -  max_{v : s_v <= (1 - f) S} b_v

how much the best validation BLEU rose over the last quarter of training. A budget in updates
is long enough for a comparison when the best variant's late gain (mean over its seeds) is
below ``CONVERGED_GAIN``: its validation BLEU has stopped rising, so giving every variant more
updates would not change which is best for want of training. The budgets of
``experiments/<name>/config.yaml`` were chosen this way (``experiments/README.md``), and every report
prints each variant's late gain beside its updates.
"""

from __future__ import annotations

from collections.abc import Sequence

LATE_FRACTION = 0.25  # the last quarter of the updates
CONVERGED_GAIN = 1.0  # BLEU: below it, the best validation score has stopped rising
# The fewest validations that measure it: at evenly spaced validations, the last quarter then
# holds the final one and three come before it. A shorter run (a smoke test's 2) tells nothing.
MIN_VALIDATIONS = 4


def late_gain(
    validations: Sequence[Sequence[float]], fraction: float = LATE_FRACTION
) -> float | None:
    """The rise of the best validation BLEU over the last ``fraction`` of the updates, from
    ``[(step, bleu), ...]`` in any order; None with fewer than ``MIN_VALIDATIONS`` validations
    or none in the first ``1 - fraction`` of training (nothing to compare with)."""
    if len(validations) < MIN_VALIDATIONS:
        return None
    last = max(step for step, _ in validations)
    early = [bleu for step, bleu in validations if step <= (1.0 - fraction) * last]
    if not early:
        return None
    return max(bleu for _, bleu in validations) - max(early)


def has_converged(gain: float | None) -> bool | None:
    """Whether a late gain is below the protocol's threshold (None: not measurable)."""
    return None if gain is None else gain < CONVERGED_GAIN
