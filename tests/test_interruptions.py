"""A run stopped by SIGTERM or SIGINT says so: results.json "interrupted" with the signal's
name, exit code 128 + the signal number (seq2seq_lab/record/interruptions.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, tiny_overrides

from seq2seq_lab.record.interruptions import Interrupted, SignalRecorder

TESTS = Path(__file__).resolve().parent


def _train_until_signalled(tmp_path: Path, cache_dir: Path, signum: int, *sweep: str):
    """Start a training run that would go on for 100k steps, send ``signum`` once its first
    step is done, and return the finished process and its run directory. ``sweep``: the
    arguments of a sweep (``-m seed=1,2 hydra.sweep.dir=DIR``) instead of one run."""
    run_dir, started = tmp_path / "run", tmp_path / "started"
    directory = list(sweep) or [f"hydra.run.dir={run_dir}"]
    env = {
        **os.environ,
        "WANDB_MODE": "offline",
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "seq2seq_lab.train",
            *tiny_overrides("bahdanau", "trainer.max_steps=100000", "trainer.max_epochs=100000"),
            "threads=1",
            "+callbacks.started._target_=signal_probe.StartedMarker",
            f"+callbacks.started.path={started}",
            *directory,
            f"paths.cache_dir={cache_dir}",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert proc.poll() is None, f"training ended before the signal: {proc.stderr.read()}"
            assert time.monotonic() < deadline, "training did not start within 120 s"
            time.sleep(0.05)
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc, stderr, run_dir


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signalled_run_is_recorded_as_interrupted(signum, tmp_path, cache_dir):
    proc, stderr, run_dir = _train_until_signalled(tmp_path, cache_dir, signum)
    name = signal.Signals(signum).name
    assert proc.returncode == 128 + signum, stderr[-3000:]
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "interrupted"
    assert results["status_reason"] == f"interrupted by {name}"
    assert f"interrupted by {name}" in stderr.splitlines()[-1]
    assert "Traceback" not in stderr


@pytest.mark.slow
def test_an_interrupted_sweep_says_where_it_is_and_how_to_go_on(tmp_path, cache_dir):
    sweep = tmp_path / "sweep"
    proc, stderr, _ = _train_until_signalled(
        tmp_path, cache_dir, signal.SIGINT, "-m", "seed=1,2", f"hydra.sweep.dir={sweep}"
    )
    assert proc.returncode == 128 + signal.SIGINT, stderr[-3000:]
    lines = stderr.splitlines()
    assert lines[-2] == f"sweep: {sweep} (interrupted)"
    resume = lines[-1].removeprefix("resume: ")
    assert resume.startswith("python -m seq2seq_lab.train -m ") and "seed=1,2" in resume
    assert resume.endswith(f"hydra.sweep.dir={sweep} resume=true")
    assert json.loads((sweep / "0" / "results.json").read_text())["status"] == "interrupted"
    # the same sweep again without resume=true is refused, naming resume=true
    again = subprocess.run([sys.executable, "-m", "seq2seq_lab.train", "-m", "seed=1,2",
                            "scale=smoke", f"hydra.sweep.dir={sweep}"], cwd=REPO,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert again.returncode == 2 and "add resume=true to go on with that sweep" in again.stderr


def test_sigterm_outside_the_trainer_interrupts_at_once():
    # No Lightning handler around this one: the recorder itself stops the run.
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    signals = SignalRecorder().install()
    with pytest.raises(Interrupted) as caught:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler runs at the next bytecode; never reached
    with signals.held():
        pass
    assert caught.value.exit_code == 143 and str(caught.value) == "interrupted by SIGTERM"
    assert {s: signal.getsignal(s) for s in before} == before  # put back


def test_a_signal_while_the_record_is_written_is_only_noted():
    signals = SignalRecorder().install()
    with signals.held():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.01)
    assert signals.received == signal.SIGTERM
    with pytest.raises(Interrupted):
        signals.raise_if_received()
