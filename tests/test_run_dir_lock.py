"""Two runs started into one directory at the same instant: one of them is refused with one line
(seq2seq_lab/record/run_lock.py), the other's record and history are its own; a lock left by a
process that died does not block the directory."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from seq2seq_lab.errors import ConfigError
from seq2seq_lab.record import run_lock

pytestmark = pytest.mark.slow

HOLD = (
    "import sys; from pathlib import Path; from seq2seq_lab.record import run_lock; "
    "run_lock.hold(Path(sys.argv[1]), kind='run', instead='elsewhere'); print('held', flush=True)"
)


def holder(directory: Path, *then: str) -> subprocess.Popen:
    """A process that locks ``directory``, says so, then runs ``then`` (Python statements)."""
    code = "; ".join((HOLD, *then))
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(directory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline() == "held\n"
    return proc


def test_a_directory_locked_by_a_live_process_is_refused(tmp_path):
    proc = holder(tmp_path / "run", "sys.stdin.read()")  # holds it until its stdin closes
    try:
        with pytest.raises(ConfigError) as caught:
            run_lock.hold(tmp_path / "run", kind="run", instead="start it elsewhere")
        assert str(caught.value) == (
            f"run directory {tmp_path / 'run'} is in use by another process started there: "
            "start it elsewhere"
        )
    finally:
        proc.kill()
        proc.wait()


def test_a_lock_dies_with_its_process(tmp_path):
    proc = holder(tmp_path / "run", "import os, signal", "os.kill(os.getpid(), signal.SIGKILL)")
    assert proc.wait() == -signal.SIGKILL  # killed while holding it: nothing released it
    run_lock.hold(tmp_path / "run", kind="run", instead="")
    run_lock.release(tmp_path / "run")
    assert os.listdir(tmp_path / "run") == []  # the lock is no file in the directory


def test_two_runs_started_into_one_directory_at_once(tmp_path, cache_dir):
    run_dir = tmp_path / "D"
    env = {**os.environ, "WANDB_MODE": "offline"}
    # the whole smoke run (training and test) outlasts the other process's start-up by far
    procs = {
        seed: subprocess.Popen(
            [
                sys.executable,
                "-m",
                "seq2seq_lab.train",
                "scale=smoke",
                f"hydra.run.dir={run_dir}",
                f"seed={seed}",
                "threads=1",
                f"paths.cache_dir={cache_dir}",
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2)
    }
    stderr = {seed: proc.communicate(timeout=300)[1] for seed, proc in procs.items()}
    codes = {seed: proc.returncode for seed, proc in procs.items()}
    assert sorted(codes.values()) == [0, 2], stderr
    (refused,) = (seed for seed, code in codes.items() if code == 2)
    (ran,) = (seed for seed, code in codes.items() if code == 0)
    assert stderr[refused].strip() == (
        f"error: run directory {run_dir} is in use by another process started there: "
        "start this one in a new directory (hydra.run.dir)"
    )
    # the directory holds one run: the one that ran, its history not interleaved with another
    assert json.loads((run_dir / "results.json").read_text())["seed"] == ran
    with open(run_dir / "csv" / "metrics.csv", newline="") as handle:
        steps = [int(row["step"]) for row in csv.DictReader(handle) if row.get("train/loss")]
    assert steps == sorted(set(steps)) and steps
