"""One run, one directory (seq2seq_lab/run_dir.py): a new run never writes into another run's
directory, a resume continues its own, runs started together get their own, and
checkpoints/best.ckpt and last.ckpt are always this run's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import compose_config, run_cli, tiny_overrides

from seq2seq_lab.errors import ConfigError
from seq2seq_lab.pipeline import train

pytestmark = pytest.mark.slow


def run(run_dir: Path, cache_dir: Path, *overrides: str) -> dict:
    cfg = compose_config("train", tiny_overrides("bahdanau", *overrides), run_dir, cache_dir)
    return train(cfg)


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
        f"in a new directory (hydra.run.dir), or continue that one with "
        f"ckpt_path={run_dir / 'checkpoints' / 'last.ckpt'}"
    )
    assert snapshot(run_dir) == before and not (run_dir / "train.log").exists()


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
        "give a new hydra.sweep.dir"
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
