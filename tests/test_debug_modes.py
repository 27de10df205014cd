"""debug=fast|overfit|anomaly (conf/debug/): each runs as a user types it, says so in its record,
and the report leaves it out, naming it."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import compose_config, run_cli, tiny_overrides
from report_support import write_run

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("mode", "trainer"),
    [
        ("fast", {"fast_dev_run": True}),
        ("overfit", {"overfit_batches": 4}),
        ("anomaly", {"detect_anomaly": True}),
    ],
)
def test_each_mode_composes_on_top_of_an_experiment(mode, trainer, tmp_path):
    cfg = compose_config("train", ["experiment=e4_norm_warmup", f"debug={mode}"], tmp_path)
    assert cfg.debug == mode
    assert {key: cfg.trainer[key] for key in trainer} == trainer
    assert compose_config("train", [], tmp_path).debug is None


def _train(run_dir: Path, cache: Path, *overrides: str) -> dict:
    proc = run_cli(
        "train",
        *tiny_overrides("bahdanau", "threads=1", *overrides),
        f"hydra.run.dir={run_dir}",
        f"paths.cache_dir={cache}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((run_dir / "results.json").read_text())


def test_fast_runs_one_batch_each_way_and_the_report_leaves_it_out(tmp_path, cache_dir):
    runs = tmp_path / "runs"
    record = _train(runs / "debug", cache_dir, "debug=fast")
    assert record["config"]["debug"] == "fast" and record["training"]["steps"] == 1
    write_run(runs / "real", experiment=None, variant="bahdanau", family="bahdanau", bleu=20.0)
    out = tmp_path / "report"
    proc = run_cli("report", str(runs), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "left out: 1 debug runs (debug=...): listed in the index" in proc.stdout
    assert "1 runs" in proc.stdout  # the real run only
    assert "- `debug`: debug=fast" in (out / "README.md").read_text()


def test_overfit_trains_on_the_same_four_batches_every_epoch(tmp_path, cache_dir):
    run_dir = tmp_path / "run"
    # small batches: the smoke training set holds many more than four
    record = _train(
        run_dir, cache_dir, "debug=overfit", "data.max_tokens=128", "trainer.max_steps=12"
    )
    assert record["config"]["debug"] == "overfit" and record["training"]["steps"] == 12
    steps = defaultdict(set)
    with open(run_dir / "csv" / "metrics.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row.get("train/loss"):
                steps[int(row["epoch"])].add(int(row["step"]))
    assert [len(s) for s in steps.values()] == [4, 4, 4]


def test_anomaly_detection_is_on_in_the_recorded_run(tmp_path, cache_dir):
    record = _train(tmp_path / "run", cache_dir, "debug=anomaly")
    assert record["config"]["debug"] == "anomaly"
    assert record["config"]["trainer"]["detect_anomaly"] is True
    assert record["status"] == "completed"
