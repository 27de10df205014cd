"""One run, one directory (seq2seq_lab/record/run_dir.py): a new run never writes into another run's
directory, a resume continues its own, runs started together get their own, and
checkpoints/best.ckpt and last.ckpt are always this run's."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import compose_config, run_cli, tiny_overrides
from omegaconf import OmegaConf
from report_support import write_run

from seq2seq_lab.errors import ConfigError
from seq2seq_lab.pipeline.training import train
from seq2seq_lab.record.run_dir import cap_seconds, check_run_dir, continuation
from seq2seq_lab.report.runs import find_runs

pytestmark = pytest.mark.slow


def run(run_dir: Path, cache_dir: Path, *overrides: str) -> dict:
    cfg = compose_config("train", tiny_overrides("bahdanau", *overrides), run_dir, cache_dir)
    return train(cfg)


def _metrics(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "csv" / "metrics.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def snapshot(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}


def test_a_new_run_refuses_a_directory_that_holds_a_run(tmp_path, cache_dir):
    run_dir = tmp_path / "run"
    run(run_dir, cache_dir, "trainer.max_steps=2", "test=false")
    before = snapshot(run_dir)
    with pytest.raises(ConfigError) as caught:
        run(run_dir, cache_dir, "trainer.max_steps=2", "test=false", "seed=2")
    message = str(caught.value)
    assert "\n" not in message and str(run_dir) in message
    assert "results.json" in message and "checkpoints" in message
    assert snapshot(run_dir) == before  # not one file written, no best-v1.ckpt


def test_the_command_line_refuses_before_hydra_writes_into_the_directory(tmp_path):
    # Hydra writes .hydra/ and the job log into the run directory before train starts: the
    # check runs before that (a Hydra callback), so the other run's record stays as it was
    run_dir = tmp_path / "run"
    (run_dir / ".hydra").mkdir(parents=True)
    (run_dir / "results.json").write_text('{"status": "completed"}\n')
    (run_dir / ".hydra" / "config.yaml").write_text("seed: 1\n")
    before = snapshot(run_dir)
    proc = run_cli("train", *tiny_overrides("bahdanau"), f"hydra.run.dir={run_dir}")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"error: run directory {run_dir} already holds a run (results.json): start this one "
        "in a new directory (hydra.run.dir)"  # no checkpoint there: none is offered to resume
    )
    assert snapshot(run_dir) == before and not (run_dir / "train.log").exists()


def write_corpus(root: Path, en_lines: int) -> None:
    """A tiny de-en corpus {train,val,test}.{de,en}, 20 lines a split, where train.en has
    ``en_lines`` lines (fewer: the files are not parallel)."""
    root.mkdir(parents=True, exist_ok=True)
    for split in ("train", "val", "test"):
        n = en_lines if split == "train" else 20
        (root / f"{split}.de").write_text("".join(f"der Hund {i}\n" for i in range(20)))
        (root / f"{split}.en").write_text("".join(f"the dog {i}\n" for i in range(n)))


def test_the_same_command_reuses_a_directory_whose_run_failed_without_a_checkpoint(
    tmp_path, cache_dir
):
    corpus, run_dir = tmp_path / "corpus", tmp_path / "run"
    write_corpus(corpus, en_lines=19)  # a mistake found only when reading the data
    command = ("train", *tiny_overrides("bahdanau", "data=parallel_text", f"data.root={corpus}",
               "data.tokenizer.vocab_size=60", "trainer.max_steps=2", "test=false", "threads=1"),
               f"paths.cache_dir={cache_dir}", f"hydra.run.dir={run_dir}")  # fmt: skip
    failed = run_cli(*command)
    assert failed.returncode == 2 and "has 20 lines but" in failed.stderr, failed.stderr[-3000:]
    assert json.loads((run_dir / "results.json").read_text())["status"] == "failed"
    assert not (run_dir / "checkpoints" / "last.ckpt").exists()
    record = snapshot(run_dir)

    write_corpus(corpus, en_lines=20)
    again = run_cli(*command)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads((run_dir / "results.json").read_text())["status"] == "completed"
    # the failed run is kept beside the new one, whole (its Hydra record and log too)
    (aside,) = (run_dir / "abandoned").iterdir()
    assert snapshot(aside) == record
    line = (
        f"run directory {run_dir}: the run there (failed) left no checkpoint to continue from; "
        f"its files were moved to {aside} and a new run starts"
    )
    assert (again.stdout + again.stderr).count(line) == 1
    assert (run_dir / "train.log").read_text().count(line) == 1
    runs, _ = find_runs(tmp_path)
    assert [r.path for r in runs] == [run_dir]  # the report counts the new run only


@pytest.mark.parametrize("status", ["completed", "diverged", "failed"])
def test_a_finished_run_or_one_with_a_last_checkpoint_keeps_its_directory(tmp_path, status):
    run_dir = tmp_path / "run"
    (run_dir / "checkpoints").mkdir(parents=True)
    (run_dir / "results.json").write_text(json.dumps({"status": status}))
    if status == "failed":
        (run_dir / "checkpoints" / "last.ckpt").write_bytes(b"")
    before = snapshot(run_dir)
    with pytest.raises(ConfigError, match="already holds a run"):
        check_run_dir(run_dir, None)
    assert snapshot(run_dir) == before


def test_a_sweep_refuses_a_directory_that_holds_a_sweep(tmp_path):
    sweep_dir = tmp_path / "sweep"
    (sweep_dir / "0").mkdir(parents=True)
    (sweep_dir / "multirun.yaml").write_text("hydra: {}\n")
    (sweep_dir / "0" / "results.json").write_text('{"status": "completed"}\n')
    before = snapshot(sweep_dir)
    proc = run_cli("train", "-m", *tiny_overrides("bahdanau"), "seed=1,2",
                   f"hydra.sweep.dir={sweep_dir}")  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"error: sweep directory {sweep_dir} already holds a sweep (multirun.yaml, 0/): "
        "give a new hydra.sweep.dir, or add resume=true to go on with that sweep (its "
        "finished jobs kept, an unfinished one continued from its last.ckpt)"
    )
    assert snapshot(sweep_dir) == before


def test_a_checkpoint_of_another_run_does_not_open_a_directory_that_holds_one(tmp_path, cache_dir):
    run(tmp_path / "a", cache_dir, "trainer.max_steps=2", "test=false")
    run(tmp_path / "b", cache_dir, "trainer.max_steps=2", "test=false")
    other = tmp_path / "a" / "checkpoints" / "last.ckpt"
    with pytest.raises(ConfigError, match="already holds a run"):
        run(tmp_path / "b", cache_dir, "trainer.max_steps=4", "test=false", f"ckpt_path={other}")


def test_a_resume_continues_its_own_run_in_its_directory(tmp_path, cache_dir):
    run_dir = tmp_path / "run"
    run(run_dir, cache_dir, "trainer.max_steps=4", "trainer.max_epochs=20", "test=false")
    last = run_dir / "checkpoints" / "last.ckpt"
    resumed = run(
        run_dir,
        cache_dir,
        "trainer.max_steps=8",
        "trainer.max_epochs=20",
        "test=false",
        f"ckpt_path={last}",
    )
    assert resumed["status"] == "completed" and resumed["training"]["steps"] == 8
    # best.ckpt and last.ckpt are overwritten in place, never best-v1/last-v1 beside them
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == ["best.ckpt", "last.ckpt"]
    assert torch.load(last, weights_only=True)["global_step"] > 4  # the resumed run's


def test_runs_started_together_get_their_own_directories(tmp_path, cache_dir):
    # Two real runs with Hydra's default run directory, started at the same moment.
    command = [
        sys.executable,
        "-m",
        "seq2seq_lab.train",
        *tiny_overrides("bahdanau", "trainer.max_steps=1", "test=false", "threads=1"),
        f"paths.cache_dir={cache_dir}",
    ]
    env = {**os.environ, "WANDB_MODE": "offline"}
    procs = [
        subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    for proc in procs:
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr[-3000:]
    run_dirs = sorted((tmp_path / "outputs" / "train").iterdir())
    assert len(run_dirs) == 2
    assert all((d / "results.json").is_file() for d in run_dirs)
    # named <start time to the microsecond>_pid<process id>: sortable and never shared
    stamp = re.compile(r"\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d\.\d{6}_pid(\d+)")
    names = [stamp.fullmatch(d.name) for d in run_dirs]
    assert all(names), [d.name for d in run_dirs]
    assert {int(name.group(1)) for name in names} == {proc.pid for proc in procs}


# ---------------------------------------------------------------- a resumable queue (resume=true)
def test_a_queue_keeps_a_finished_run_as_it_is(tmp_path, cache_dir):
    run_dir = tmp_path / "run"
    first = run(run_dir, cache_dir, "trainer.max_steps=2", "test=false")
    before = snapshot(run_dir)
    again = run(run_dir, cache_dir, "trainer.max_steps=2", "test=false", "resume=true")
    assert again["status"] == first["status"] == "completed"
    assert again["training"]["steps"] == 2
    assert snapshot(run_dir) == before  # not trained again, not one file rewritten


def test_a_queue_continues_a_run_killed_after_its_first_checkpoint(tmp_path, cache_dir):
    run_dir = tmp_path / "run"
    args = ("trainer.max_epochs=20", "test=false")
    run(run_dir, cache_dir, "trainer.max_steps=4", *args)
    (run_dir / "results.json").unlink()  # what kill -9 leaves: checkpoints, no record
    resumed = run(run_dir, cache_dir, "trainer.max_steps=8", *args, "resume=true")
    assert resumed["status"] == "completed" and resumed["training"]["steps"] == 8
    assert resumed["config"]["ckpt_path"] == str(run_dir / "checkpoints" / "last.ckpt")
    # the history goes on from the checkpoint: every update once, none repeated
    steps = [int(row["step"]) for row in _metrics(run_dir) if row.get("train/loss")]
    assert len(steps) == len(set(steps))


def test_a_queue_restarts_a_run_killed_before_its_first_checkpoint_and_keeps_its_files(
    tmp_path, cache_dir
):
    run_dir = tmp_path / "sweep" / "0"
    left = {  # killed after its first logged rows, no checkpoint
        "csv/metrics.csv": "step,train/loss_step\n0,9.1\n",
        "results.json": '{"status": "interrupted", "config": {"seed": 1}}\n',
        "diagnostics/validation.jsonl": '{"step": 0, "when": "init"}\n',
        "train.log": "the first run's log\n",
        ".hydra/config.yaml": "seed: 1\n",
    }
    for name, text in left.items():
        (run_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (run_dir / name).write_text(text)
    result = run(run_dir, cache_dir, "trainer.max_steps=2", "test=false", "resume=true", "seed=1")
    assert result["status"] == "completed"
    (aside,) = (run_dir / "abandoned").iterdir()
    assert {name: (aside / name).read_text() for name in left} == left  # every file it left
    assert not (run_dir / "diagnostics").exists() and not (run_dir / "train.log").exists()
    # the report counts the run once, not the abandoned start beside it
    runs, _ = find_runs(tmp_path / "sweep")
    assert [r.path for r in runs] == [run_dir]


def test_a_queue_restarting_a_run_keeps_the_first_runs_log_apart(tmp_path, cache_dir):
    # from the command line Hydra has written the new job's record and opened its log (after
    # the first run's lines) before train sees the directory: the first run's log goes aside
    # whole, and the new run's log and record are its own
    sweep_dir = tmp_path / "sweep"
    run_dir = sweep_dir / "0"
    (run_dir / "diagnostics").mkdir(parents=True)
    (run_dir / "results.json").write_text('{"status": "interrupted", "config": {"seed": 1}}\n')
    (run_dir / "diagnostics" / "validation.jsonl").write_text('{"step": 0, "when": "init"}\n')
    (run_dir / "train.log").write_text("the first run's log\n")
    proc = run_cli("train", "-m", *tiny_overrides("bahdanau", "trainer.max_steps=1", "test=false"),
                   "seed=1", "resume=true", f"paths.cache_dir={cache_dir}",
                   f"hydra.sweep.dir={sweep_dir}")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (aside,) = (run_dir / "abandoned").iterdir()
    assert (aside / "train.log").read_text().startswith("the first run's log\n")
    assert (aside / "diagnostics" / "validation.jsonl").is_file()
    log = (run_dir / "train.log").read_text()
    assert "the first run's log" not in log and "budget:" in log
    assert (run_dir / ".hydra" / "overrides.yaml").is_file()
    assert json.loads((run_dir / "results.json").read_text())["status"] == "completed"


def test_a_queue_refuses_a_directory_that_holds_another_jobs_run(tmp_path, cache_dir):
    run_dir = tmp_path / "run"
    run(run_dir, cache_dir, "trainer.max_steps=2", "test=false", "seed=1")
    before = snapshot(run_dir)
    with pytest.raises(ConfigError) as caught:
        run(run_dir, cache_dir, "trainer.max_steps=2", "test=false", "seed=2", "resume=true")
    message = str(caught.value)
    assert "\n" not in message and str(run_dir) in message
    assert "seed 1, not this job's" in message and "seed 2" in message
    assert snapshot(run_dir) == before


def test_a_queue_runs_its_sweep_again_into_the_same_directory(tmp_path, cache_dir):
    sweep_dir = tmp_path / "sweep"
    args = [*tiny_overrides("bahdanau", "trainer.max_steps=2", "test=false"), "seed=1,2",
            "resume=true", f"paths.cache_dir={cache_dir}", f"hydra.sweep.dir={sweep_dir}"]  # fmt: skip
    first = run_cli("train", "-m", *args)
    assert first.returncode == 0, first.stderr[-3000:]
    jobs = sorted(job for job in sweep_dir.iterdir() if job.is_dir())
    assert [(job / "results.json").is_file() for job in jobs] == [True, True]
    before = {job: snapshot(job) for job in jobs}
    assert ".hydra/overrides.yaml" in before[jobs[0]] and "train.log" in before[jobs[0]]
    # the sweep directory is not refused; a pass with another override (a wall-clock cap the
    # finished runs never ran with) leaves them byte for byte, Hydra's record and log included
    again = run_cli("train", "-m", *args, "cpu_run_minutes=7")
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.count("finished before (completed), kept as it is") == 2
    assert {job: snapshot(job) for job in jobs} == before


def test_a_queue_sweeps_what_the_scale_sets_in_its_params(tmp_path, cache_dir):
    """E4's lrs per scale (${hydra:runtime.choices.scale} in its sweep params) resolve in a
    resumable sweep too, which skips the directory check (a multi30k queue once failed here
    before its first job); the command line narrows the grid to one setting at both lrs."""
    sweep_dir = tmp_path / "sweep"
    proc = run_cli("train", "-m", "experiment=e4_norm_warmup", *tiny_overrides("transformer"),
                   "model.norm=pre", "schedule.linear_warmup=true", "model.encoder_layers=1",
                   "seed=1", "trainer.max_steps=1", "test=false", "resume=true",
                   f"paths.cache_dir={cache_dir}", f"hydra.sweep.dir={sweep_dir}")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    lrs = [
        OmegaConf.load(job / ".hydra" / "config.yaml").optim.lr for job in sweep_dir.glob("[0-9]*")
    ]
    assert sorted(lrs) == [5e-4, 1e-3]  # experiments/e4_norm_warmup/config.yaml: e4_lrs.smoke


def test_a_report_finds_the_runs_kept_inside_its_own_directory(tmp_path):
    write_run(tmp_path / "report" / "runs" / "0", experiment="e7_cells", variant="v",
              family="plain", bleu=5.0)  # fmt: skip
    write_run(tmp_path / "report" / "old" / "0", experiment="e7_cells", variant="w",
              family="plain", bleu=5.0)  # fmt: skip
    runs, _ = find_runs(tmp_path / "report" / "runs", exclude=tmp_path / "report")
    assert [r.variant for r in runs] == ["v"]
    runs, _ = find_runs(tmp_path, exclude=tmp_path / "report")  # the report's output skipped
    assert runs == []


@pytest.mark.parametrize(
    ("stopped_by", "now", "goes_on"),
    [("trainer.max_time", {"minutes": 120}, True), ("trainer.max_time", None, True),
     ("trainer.max_time", {"minutes": 40}, False), ("trainer.max_time", "00:00:30:00", False),
     ("trainer.max_steps=8000", {"minutes": 120}, False)],
)  # fmt: skip
def test_a_queue_continues_a_run_its_clock_ended_once_the_cap_is_raised(
    tmp_path, stopped_by, now, goes_on
):
    """A finished run is kept, unless the wall clock ended it and the job now allows more."""
    path = write_run(tmp_path / "0", experiment="e4", variant="pre", family="transformer", seed=1)
    results = json.loads((path / "results.json").read_text())
    results["config"].update(experiment_name="e4", variant="pre", seed=1,
                             trainer={"max_time": {"minutes": 40}})  # fmt: skip
    results["training"] = {"steps": 7391, "stopped_by": stopped_by}
    (path / "results.json").write_text(json.dumps(results))
    (path / "checkpoints").mkdir()
    (path / "checkpoints" / "last.ckpt").write_bytes(b"")
    job = {"experiment_name": "e4", "variant": "pre", "seed": 1, "trainer": {"max_time": now}}
    kept = continuation(path, job)
    assert (kept.ckpt_path == path / "checkpoints" / "last.ckpt") is goes_on
    assert (kept.finished is None) is goes_on


def test_cap_seconds_reads_every_form_lightning_takes():
    from datetime import timedelta

    assert cap_seconds({"minutes": 40}) == cap_seconds("00:00:40:00") == 2400
    assert cap_seconds(timedelta(hours=1)) == 3600 and cap_seconds(None) == float("inf")
