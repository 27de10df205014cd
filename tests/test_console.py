"""What a training run prints, as a user sees it (seq2seq_lab/console.py): each line once, no
third-party chatter, what trains at the start, where its outputs are and what to run next at
the end; after Ctrl-C, the command that resumes it."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest
from conftest import REPO, run_cli, tiny_overrides

from seq2seq_lab.data.test_set import read_test_lines

pytestmark = pytest.mark.slow


def test_a_run_says_what_trains_and_where_its_outputs_went(smoke_run):
    run_dir, proc = smoke_run
    assert proc.stderr == ""  # no warning, no second copy of a log line
    out = proc.stdout
    assert out.count("`Trainer.fit` stopped") == 1 and "Tip:" not in out
    parameters = json.loads((run_dir / "results.json").read_text())["parameters"]
    for line in (
        f"run: {run_dir}",
        f"model: bahdanau, {parameters:,} parameters; seed 1234",
        "budget: 6 updates; precision 32-true",
    ):
        assert f"] - {line}\n" in out, line
    bleu = json.loads((run_dir / "results.json").read_text())["test"]["bleu"]
    best = run_dir / "checkpoints" / "best.ckpt"
    first = read_test_lines(run_dir, "sources", "test")[0]  # the task's sentences: no file
    translate = f"echo {shlex.quote(first)} | python -m seq2seq_lab.translate ckpt_path={best}"
    assert out.endswith(
        f"completed, test BLEU {bleu:.2f}: {run_dir / 'results.json'}\n"
        f"score: python -m seq2seq_lab.eval ckpt_path={best} data.split=test\n"
        f"translate: {translate}\n"
        f"report: python -m seq2seq_lab.report {run_dir}\n"
    )
    # the translate command, pasted, translates that sentence
    pasted = translate.replace("python", shlex.quote(sys.executable), 1)
    done = subprocess.run(pasted, shell=True, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 1, done.stderr[-2000:]


def test_ctrl_c_prints_the_command_that_resumes_the_run(tmp_path, cache_dir):
    run_dir = tmp_path / "run"
    overrides = [
        *tiny_overrides("bahdanau", "threads=1", "trainer.max_steps=60", "trainer.max_epochs=100"),
        "callbacks.last_checkpoint.every_n_train_steps=2",
        "callbacks.early_stopping=null",  # the budget, not a plateau, ends it
        f"paths.cache_dir={cache_dir}",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "seq2seq_lab.train", *overrides, f"hydra.run.dir={run_dir}"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "WANDB_MODE": "offline"},
    )  # fmt: skip
    last = run_dir / "checkpoints" / "last.ckpt"
    deadline = time.monotonic() + 300
    while not last.is_file() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 128 + signal.SIGINT, err[-3000:]
    resume = out.splitlines()[-2]
    expected = ["python", "-m", "seq2seq_lab.train", *overrides]
    expected += [f"ckpt_path={last}", f"hydra.run.dir={run_dir}"]
    assert resume == f"resume: {shlex.join(expected)}"
    # the printed command, as a user pastes it, finishes the run
    again = run_cli("train", *shlex.split(resume.removeprefix("resume: "))[3:])
    assert again.returncode == 0, again.stderr[-3000:]
    record = json.loads((run_dir / "results.json").read_text())
    assert record["status"] == "completed" and record["training"]["steps"] == 60


def test_a_sweep_ends_on_its_directory_and_the_report_command(tmp_path, cache_dir):
    sweep = tmp_path / "sweep"
    proc = run_cli(
        "train",
        "-m",
        *tiny_overrides("bahdanau", "threads=1", "seed=1,2"),
        f"hydra.sweep.dir={sweep}",
        f"paths.cache_dir={cache_dir}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "report: python -m seq2seq_lab.report" in proc.stdout
    assert proc.stdout.endswith(
        f"sweep: {sweep} (2 runs with a results.json)\n"
        f"report: python -m seq2seq_lab.report {sweep}\n"
    )
    assert "score: python -m seq2seq_lab.eval" not in proc.stdout  # no per-job footer


def test_eval_says_where_it_wrote(smoke_run, tmp_path):
    run_dir, _ = smoke_run
    out = tmp_path / "eval"
    ckpt = run_dir / "checkpoints" / "best.ckpt"
    proc = run_cli("eval", f"ckpt_path={ckpt}", "data.split=val", f"hydra.run.dir={out}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == ""
    assert proc.stdout.endswith(
        f"results: {out / 'eval_results.json'}; hypotheses: {out / 'hypotheses.val.txt'}\n"
    )


def test_an_optuna_search_prints_its_trials_not_its_libraries(tmp_path, cache_dir):
    sweep = tmp_path / "search"
    proc = run_cli(
        "train",
        "-m",
        "hparams_search=optuna",
        "hydra.sweeper.n_trials=2",
        *tiny_overrides("bahdanau", "threads=1"),
        f"hydra.sweep.dir={sweep}",
        f"paths.cache_dir={cache_dir}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == ""  # no "A new study created in memory" from Optuna
    assert "setup plugin" not in proc.stdout  # nor its database layer's plugins
    assert "Best parameters:" in proc.stdout
    assert proc.stdout.endswith(f"report: python -m seq2seq_lab.report {sweep}\n")


def test_print_config_prints_every_setting_resolved_before_the_run(tmp_path, cache_dir):
    import yaml

    from seq2seq_lab.console import RESOLVED
    from seq2seq_lab.record.portable_paths import portable_record

    run_dir = tmp_path / "run"
    proc = run_cli("train", "scale=smoke", "threads=1", "trainer.max_steps=3", "print_config=true",
                   f"hydra.run.dir={run_dir}", f"paths.cache_dir={cache_dir}")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    start = lines.index(RESOLVED) + 1
    end = lines.index("", start)
    printed = yaml.safe_load("\n".join(lines[start:end]))
    recorded = json.loads((run_dir / "results.json").read_text())["config"]
    # results.json records the same config with the run's own paths made portable
    portable = portable_record({"config": printed, "run_dir": str(run_dir)}, run_dir)["config"]
    assert portable == recorded and printed["trainer"]["max_steps"] == 3
    assert printed["paths"]["output_dir"] == str(run_dir)  # resolved, not ${hydra:...}
