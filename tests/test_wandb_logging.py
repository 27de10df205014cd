"""What a W&B run carries, read back from the offline run directory as a user's commands
leave it: its name and grouping, its config (once, flat), results.json's figures in its
summary, the test hypotheses as a table, and the workspace that shows a grid side by side.

The offline run is read with W&B's own reader of its transaction log
(``wandb leet inspect``): an offline run of this W&B version writes no files/config.yaml or
wandb-summary.json (those come with a sync). Tables are read from their files under media/.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from seq2seq_lab.data.test_set import read_test_lines
from seq2seq_lab.loggers.wandb_record import best_step, summary_of

pytestmark = pytest.mark.slow
wandb = pytest.importorskip("wandb")

# four epochs, each validated: enough for a late gain (training/convergence.py MIN_VALIDATIONS)
TRAIN = ("scale=smoke", "logger=wandb", "threads=1", "trainer.max_epochs=4", "trainer.max_steps=12")
# one job of E2's grid: enough for its name and for the workspace's filter to select it
EXPERIMENT = "e2_reversal"
ONE_JOB = (f"experiment={EXPERIMENT}", "model=bahdanau", "model.reverse_source=true")


def records(run_dir: Path) -> list[dict[str, Any]]:
    """The records of the run's transaction log, in order (``wandb leet inspect --json``)."""
    return [json.loads(line) for line in inspect(run_dir).splitlines() if line.strip()]


def summary_view(run_dir: Path) -> dict[str, Any]:
    """The run's final state: ``config``, ``summary``, ``name``, ``state`` ..."""
    return json.loads(inspect(run_dir, "--summary"))


@functools.cache  # the log of a finished run no longer changes
def inspect(run_dir: Path, *flags: str) -> str:
    (offline,) = (run_dir / "wandb").glob("offline-run-*")
    done = subprocess.run(
        [sys.executable, "-m", "wandb", "leet", "inspect", "--json", *flags, str(offline)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def run_record(run_dir: Path) -> dict[str, Any]:
    return next(r["run"] for r in records(run_dir) if r.get("type") == "run")


@pytest.fixture(scope="module")
def plain_command(tmp_path_factory, cache_dir) -> tuple[Path, subprocess.CompletedProcess]:
    """The brief's command outside any experiment: its run directory and what it printed."""
    run_dir = tmp_path_factory.mktemp("plain") / "run"
    done = run_cli("train", *TRAIN, f"hydra.run.dir={run_dir}", f"paths.cache_dir={cache_dir}")
    assert done.returncode == 0, done.stderr[-3000:]
    return run_dir, done


@pytest.fixture
def plain_run(plain_command) -> Path:
    return plain_command[0]


def test_w_and_b_says_where_the_run_is_in_a_few_lines(plain_command):
    """W&B's own console is quiet (conf/logger/wandb.yaml): no banner, sparklines, summary
    table or warning, only where the run is saved."""
    run_dir, done = plain_command
    (offline,) = (run_dir / "wandb").glob("offline-run-*")
    lines = done.stderr.splitlines()
    assert all(line.startswith("wandb: ") for line in lines), lines
    # (a W&B service another test of this process started adds one line saying it is reused)
    chatter = ("Tracking run", "Run history", "Run summary", "WARNING", "sync this run")
    assert not [line for line in lines if any(word in line for word in chatter)], lines
    assert f"wandb: Run data is saved locally in {offline}" in lines


@pytest.fixture(scope="module")
def experiment_run(tmp_path_factory, cache_dir) -> Path:
    """One job of an experiment's sweep, as ``-m experiment=...`` runs it."""
    sweep = tmp_path_factory.mktemp("sweep")
    done = run_cli(
        "train", "-m", *ONE_JOB, *TRAIN, f"hydra.sweep.dir={sweep}", f"paths.cache_dir={cache_dir}"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return sweep / "0"


def results_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "results.json").read_text())


def test_a_run_is_named_for_its_experiment_variant_and_seed(plain_run, experiment_run):
    results = results_of(experiment_run)
    run = run_record(experiment_run)
    assert run["display_name"] == f"{EXPERIMENT}/{results['variant']}/seed={results['seed']}"
    assert run["run_group"] == EXPERIMENT
    assert run["job_type"] == results["variant"] == "bahdanau_reverse-True"
    # outside an experiment: the model family and the seed, in the group of the loose runs
    results = results_of(plain_run)
    run = run_record(plain_run)
    assert run["display_name"] == f"bahdanau/seed={results['seed']}"
    assert (run["run_group"], run["job_type"]) == ("adhoc", "bahdanau")


def test_the_config_is_logged_once_and_flat(plain_run):
    updates = [
        r["config"]["update"]
        for r in records(plain_run)
        if r.get("type") == "config" and set(r["config"].get("update", {})) - {"_wandb"}
    ]
    assert len(updates) == 1, [sorted(u)[:5] for u in updates]
    (config,) = updates
    assert not [k for k, v in config.items() if isinstance(v, dict)]
    # the module's constructor arguments (Lightning's own call) are not a second copy
    assert not [k for k in config if k.split(".")[0] in ("network", "optimizer", "run_config")]
    results = results_of(plain_run)
    assert config["model._target_"] == results["config"]["model"]["_target_"]
    assert config["optim.lr"] == results["config"]["optim"]["lr"]
    assert config["scale"] == results["scale"] == "smoke"
    assert config["data_summary.splits.train.pairs"] == results["data"]["splits"]["train"]["pairs"]
    assert summary_view(plain_run)["config"] == config  # the run's final config: that one


def test_the_summary_holds_the_figures_of_results_json(plain_run):
    results = results_of(plain_run)
    summary = summary_view(plain_run)["summary"]
    test, training = results["test"], results["training"]
    assert summary["status"] == results["status"] == "completed"
    for key in ("bleu", "chrf", "ter"):
        assert summary[f"test/{key}"] == test[key]
    assert test["bleu_by_length"]
    for bucket, figures in test["bleu_by_length"].items():
        assert summary[f"test/bleu_by_length/{bucket}/bleu"] == figures["bleu"]
        assert summary[f"test/bleu_by_length/{bucket}/count"] == figures["count"]
    for key in ("best_val_bleu", "late_val_gain", "steps", "stopped_by"):
        assert summary[f"training/{key}"] == training[key]
    best = max(bleu for _, bleu in training["validations"])
    first_best = min(step for step, bleu in training["validations"] if bleu == best)
    assert summary["training/best_val_step"] == first_best


def test_the_test_hypotheses_are_a_table(plain_run):
    entry = summary_view(plain_run)["summary"]["test/hypotheses"]
    (offline,) = (plain_run / "wandb").glob("offline-run-*")
    table = json.loads((offline / "files" / entry["path"]).read_text(encoding="utf-8"))
    assert table["columns"] == ["source", "hypothesis", "reference"]
    split = results_of(plain_run)["test"]["split"]
    # the test set as test_set.json names it (the generated task: by its data config)
    columns = [
        read_test_lines(plain_run, kind, split) for kind in ("sources", "hypotheses", "references")
    ]
    assert table["data"] == [list(row) for row in zip(*columns)]


def test_the_workspace_shows_the_experiments_runs_side_by_side(experiment_run, tmp_path):
    pytest.importorskip("wandb_workspaces")
    out = tmp_path / "view.json"
    module = "loggers.wandb_workspace"
    done = run_cli(module, EXPERIMENT, "--entity", "lab", "--scale", "smoke", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    spec = json.loads(out.read_text())["spec"]["section"]
    (runset,) = spec["runSets"]
    filters = {
        (f["key"]["section"], f["key"]["name"]): f["value"] for f in runset["filters"]["filters"]
    }
    assert filters == {("run", "group"): EXPERIMENT, ("config", "scale"): "smoke"}
    assert runset["grouping"] == [{"section": "run", "name": "jobType"}]

    # the filter selects the experiment's run, and every figure shown is one the run has
    view = summary_view(experiment_run)
    run = run_record(experiment_run)
    assert (run["run_group"], view["config"]["scale"]) == (EXPERIMENT, "smoke")
    summary = view["summary"]
    history = {
        k
        for r in records(experiment_run)
        if r.get("type") == "history"
        for k in r["history"]["item"]
    }
    panels = [p for s in spec["panelBankConfig"]["sections"] for p in s["panels"]]
    bars = [m for p in panels if p["viewType"] == "Bar Chart" for m in p["config"]["metrics"]]
    shown = {m.removeprefix("summary_metrics.") for m in bars}
    by_length = {k for k in shown if k.startswith("test/bleu_by_length/")}
    assert shown - by_length <= set(summary)
    assert {k for k in summary if k.endswith("/bleu") and "bleu_by_length" in k} <= by_length
    assert all(p["config"]["groupBy"] == "jobType" for p in panels if "groupBy" in p["config"])
    curves = [p["config"] for p in panels if p["viewType"] == "Run History Line Plot"]
    assert {m for c in curves for m in c["metrics"]} | {c["xAxis"] for c in curves} <= history
    pinned = [c.removeprefix("summary:") for c in runset["runFeed"]["columnOrder"][1:]]
    assert set(pinned) <= set(summary) and "test/bleu" in pinned
    assert "test/hypotheses" in json.dumps([p for p in panels if p["viewType"] == "Weave"])


def test_a_run_that_failed_before_its_test_has_the_figures_it_reached():
    record = {"status": "failed", "error": "RuntimeError: ...", "training": {"steps": 40}}
    assert summary_of(record) == {"status": "failed", "training/steps": 40}


def test_the_best_step_is_the_first_validation_with_the_highest_bleu():
    # the best checkpoint is replaced only by a strictly higher score
    assert best_step([[100, 5.0], [200, 7.0], [300, 7.0], [400, 6.0]]) == 200
