"""``logger=tensorboard``: Lightning's own TensorBoardLogger writes ``RUN/tensorboard/`` with
every curve the CSV history has (which stays: reports read it); without the tensorboard
package the run is refused in one line before anything starts."""

from __future__ import annotations

import csv
import importlib.util

import pytest
from conftest import run_cli

pytestmark = pytest.mark.slow

INSTALLED = any(importlib.util.find_spec(name) for name in ("tensorboard", "tensorboardX"))


@pytest.mark.skipif(not INSTALLED, reason="pip install -e '.[tensorboard]'")
def test_tensorboard_holds_the_curves_the_csv_history_has(tmp_path, cache_dir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir = tmp_path / "run"
    done = run_cli("train", "scale=smoke", "logger=tensorboard", "threads=1",
                   f"hydra.run.dir={run_dir}", f"paths.cache_dir={cache_dir}")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    events = EventAccumulator(str(run_dir / "tensorboard"))
    events.Reload()
    with (run_dir / "csv" / "metrics.csv").open() as table:
        curves = set(next(csv.reader(table))) - {"step"}
    assert curves and set(events.Tags()["scalars"]) == curves
    bleu = [event.value for event in events.Scalars("test/bleu")]
    assert len(bleu) == 1 and 0.0 <= bleu[0] <= 100.0


@pytest.mark.skipif(INSTALLED, reason="tensorboard is installed")
def test_without_the_package_tensorboard_is_refused_before_any_work(tmp_path):
    run_dir = tmp_path / "run"
    done = run_cli("train", "scale=smoke", "logger=tensorboard", f"hydra.run.dir={run_dir}")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: logger=tensorboard: the tensorboard package is not installed; "
        "pip install -e '.[tensorboard]' (or choose logger=csv)"
    ]
    assert not run_dir.exists()
