"""The protocol's convergence check (training/convergence.py) on worked examples."""

from __future__ import annotations

import pytest

from seq2seq_lab.training.convergence import CONVERGED_GAIN, has_converged, late_gain


def test_the_late_gain_is_the_rise_of_the_best_score_over_the_last_quarter():
    # updates 100..800: the last quarter starts after update 600; best up to 600 is 30.0
    # (at 500: a dip at 600 does not lower it), best overall 31.5 -> gain 1.5
    history = [[100, 10.0], [200, 20.0], [300, 25.0], [400, 28.0], [500, 30.0], [600, 29.0],
               [700, 31.5], [800, 31.0]]  # fmt: skip
    assert late_gain(history) == pytest.approx(1.5)
    assert has_converged(late_gain(history)) is False
    assert late_gain(list(reversed(history))) == pytest.approx(1.5)  # order does not matter


def test_a_plateau_or_a_late_drop_has_converged():
    plateau = [[s, 40.0 + (0.2 if s == 1000 else 0.0)] for s in range(100, 1001, 100)]
    assert late_gain(plateau) == pytest.approx(0.2) and has_converged(0.2)
    dropping = [[100, 50.0], [200, 52.0], [300, 40.0], [400, 30.0]]  # a late blow-up
    assert late_gain(dropping) == 0.0 and has_converged(0.0)
    assert has_converged(CONVERGED_GAIN) is False  # "below" the threshold, not at it


def test_too_few_validations_are_not_measurable():
    assert late_gain([]) is None and late_gain([[100, 5.0]]) is None
    # a smoke run's two (or three) validations tell nothing, however flat
    assert late_gain([[3, 0.2], [6, 0.21]]) is None
    assert late_gain([[2, 0.2], [4, 0.2], [6, 0.2]]) is None
    assert late_gain([[2, 0.2], [4, 0.2], [6, 0.2], [8, 0.3]]) == pytest.approx(0.1)
    assert has_converged(None) is None
