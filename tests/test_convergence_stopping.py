"""A run stops once it has converged by the reports' own rule (callbacks/convergence_stopping.py,
training/convergence.py): after min_updates, at patience validations in a row; stalled under
the floor; never while it still rises, and the update budget stays the cap."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli, tiny_overrides

from seq2seq_lab.callbacks.convergence_stopping import ConvergenceStopping
from seq2seq_lab.training.convergence import CONVERGED_GAIN, late_gain


def _rule(**settings) -> ConvergenceStopping:
    defaults = {"min_updates": 0, "patience": 1, "stalled_bleu": 1.0}
    return ConvergenceStopping(**{**defaults, **settings})


def _feed(rule: ConvergenceStopping, curve: list[float]) -> int | None:
    """The update at which ``rule`` stops a run validated every 100 updates with these BLEU
    scores (None: it trains to the end)."""
    validations: list[list[float]] = []
    for i, bleu in enumerate(curve, 1):
        validations.append([i * 100, bleu])
        rule.observe(i * 100, validations)
        if rule.stop_reason is not None:
            return i * 100
    return None


def test_a_flat_curve_stops_where_the_report_would_call_it_converged():
    curve = [10, 20, 30, 31, 31.5, 31.6, 31.6, 31.7]
    rule = _rule(patience=2)
    stop = _feed(rule, curve)
    validations = [[(i + 1) * 100, b] for i, b in enumerate(curve) if (i + 1) * 100 <= stop]
    assert late_gain(validations) < CONVERGED_GAIN  # the report reads the same history
    assert stop == 700 and rule.stop_reason.startswith("converged: late gain")
    # one validation earlier the rule held once only
    assert late_gain(validations[:-1]) < CONVERGED_GAIN


def test_a_rising_curve_trains_to_its_budget():
    assert _feed(_rule(), [5, 10, 15, 20, 25, 30, 35, 40]) is None


def test_no_stop_before_min_updates_and_patience_counts_in_a_row():
    curve = [30, 30, 30, 30, 30, 30, 30, 30]
    assert _feed(_rule(min_updates=600), curve) == 600
    # flat, it would stop at 500 (met at 400 and 500); the rise at 500 starts the count again
    assert _feed(_rule(patience=2), [10, 10, 10, 10, 10, 10]) == 500
    assert _feed(_rule(patience=2), [10, 10, 10, 10, 13, 13, 13, 13]) == 800


def test_min_updates_keeps_a_run_on_a_plateau_going():
    """A plateau (flat at 80 from 300 to 800), then the rise: stopped on the plateau by the
    rule alone; min_updates past the plateau lets it rise and stop once it has converged."""
    curve = [40, 70, 80, 80, 80, 80, 80, 80, 85, 90, 92, 92.2, 92.3, 92.3, 92.3, 92.4]
    assert _feed(_rule(patience=2), curve) == 500
    stop = _feed(_rule(patience=2, min_updates=1000), curve)
    assert stop == 1600


def test_a_flat_run_under_the_floor_is_stalled():
    rule = _rule()
    assert _feed(rule, [0.1, 0.2, 0.2, 0.2]) == 400
    assert rule.stop_reason.startswith("stalled:")


def test_the_count_travels_in_a_checkpoint():
    rule = _rule(patience=3)
    _feed(rule, [10, 10, 10, 10, 10])  # 2 in a row at 400, 500
    resumed = _rule(patience=3)
    resumed.load_state_dict(rule.state_dict())
    assert resumed.in_a_row == rule.in_a_row == 2


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="patience >= 1"):
        _rule(patience=0)


@pytest.mark.slow
def test_a_run_that_stops_learning_stops_and_says_why(tmp_path):
    """lr 1e-9: validation BLEU never moves, so the run stops at the first validation the
    rule may read (min_updates 4, four validations), well before its budget of 60."""
    run_dir = tmp_path / "run"
    proc = run_cli(
        "train",
        *tiny_overrides("bahdanau", "threads=1", "stopping=convergence", "optim.lr=1e-9",
                        "trainer.max_steps=60", "trainer.max_epochs=100",
                        "trainer.val_check_interval=2", "trainer.check_val_every_n_epoch=null",
                        "callbacks.convergence_stopping.stalled_bleu=0",
                        f"hydra.run.dir={run_dir}", f"paths.cache_dir={tmp_path / 'cache'}"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    training = json.loads((run_dir / "results.json").read_text())["training"]
    assert training["steps"] < 60
    assert training["stopped_by"].startswith("converged: late gain 0.00")
    assert late_gain(training["validations"]) < CONVERGED_GAIN


def test_the_replay_on_e1s_committed_curves_stops_luongs_plateau_seed(tmp_path):
    """experiments/e1_attention/NOTES.md, "Stopping at convergence, replayed": the rule alone
    stops Luong seed 2 at 1,800 updates on its plateau, and with min_updates 6,000 two
    validations after it: only a min_updates past the plateau keeps such a seed going."""
    import subprocess
    import sys

    from conftest import REPO

    script = REPO / "experiments" / "e1_attention" / "replay_stopping.py"
    runs = REPO / "experiments" / "e1_attention" / "results" / "synthetic_v2-8k" / "runs"
    rows = {}
    for min_updates in (0, 6000):
        out = subprocess.run(
            [sys.executable, str(script), str(runs), "--min-updates", str(min_updates)],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        rows[min_updates] = [
            line for line in out.splitlines() if line.startswith("| luong_scaled | 2 ")
        ]
    assert rows[0] == ["| luong_scaled | 2 | 0.00 | 1.2% | 80.33 | 1,800 |"]
    assert rows[6000] == ["| luong_scaled | 2 | 0.00 | 1.2% | 80.33 | 6,200 |"]
