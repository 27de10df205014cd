"""loop_vs_step.py, precision_step.py and loss_passes.py, run as a user types them, at a toy size: they run,
time the network the run would train, and the loop and its bare step see the same batches."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from seq2seq_lab.config import compose_train, instantiate

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parents[1]


def script(name: str, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / name), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "WANDB_MODE": "offline"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_loop_vs_step_times_the_loop_and_its_bare_step_on_the_same_batches(tmp_path):
    out = tmp_path / "figures.json"
    done = script(
        "loop_vs_step.py", "--updates", "3", "--rounds", "1", "--work", str(tmp_path / "w"),
        "--out", str(out), "scale=smoke", "model=bahdanau",
    )  # fmt: skip
    figures = json.loads(out.read_text())
    summary, (measured,) = figures["summary"], figures["rounds"]
    assert set(measured) == {"loop", "bare"}
    # the same batches: the same real target tokens in the same number of updates
    assert measured["loop"]["tokens"] == measured["bare"]["tokens"] > 0
    assert measured["loop"]["updates"] == measured["bare"]["updates"] == 3
    assert measured["loop"]["parameters"] == measured["bare"]["parameters"]
    assert 0 < summary["real_per_padded_target"] <= 1
    assert summary["loop_over_bare"] == (
        summary["loop_step_tokens_per_second"] / summary["bare_tokens_per_second"]
    )
    assert summary["machine"]["cpu"] and summary["machine"]["torch_threads"] >= 1
    assert "loop / bare step:" in done.stdout


def test_precision_step_times_the_multi30k_network():
    """The network timed is the one ``scale=multi30k model=transformer`` trains (it once was
    the default scale's, ten times smaller)."""
    done = script("precision_step.py", "transformer", "fp32", "--rounds", "1", "--batch", "2")
    model = compose_train("scale=multi30k", "model=transformer").model
    net = instantiate(model, key="model", src_vocab_size=8000, tgt_vocab_size=8000)
    expected = sum(p.numel() for p in net.parameters())
    assert f"{expected:,} parameters" in done.stdout
    (line,) = [line for line in done.stdout.splitlines() if "ms/step" in line]
    assert float(re.search(r"([\d.]+) ms/step", line).group(1)) > 0


def test_loss_passes_times_both_losses_on_the_runs_batches():
    done = script(
        "loss_passes.py", "--batches", "2", "--rounds", "1", "scale=smoke", "model=transformer"
    )
    times = dict(re.findall(r"^(two cross_entropy passes|one log-softmax) +([\d.]+) ms/step$",
                            done.stdout, flags=re.M))  # fmt: skip
    assert set(times) == {"two cross_entropy passes", "one log-softmax"}
    assert all(float(ms) > 0 for ms in times.values())
    assert "two passes / one log-softmax:" in done.stdout
