"""callbacks.last_checkpoint.keep_last=N keeps the N latest checkpoints of a run as
step-<update>.ckpt beside last.ckpt (seq2seq_lab/callbacks/last_checkpoint.py), each the
checkpoint of its update, ready to average, as a user runs it."""

from __future__ import annotations

import pytest
import torch
from conftest import run_cli, tiny_overrides

pytestmark = pytest.mark.slow


def test_the_latest_checkpoints_stay_and_average(tmp_path, cache_dir):
    run_dir = tmp_path / "run"
    proc = run_cli(
        "train",
        # smoke: 3 updates an epoch, validation after each epoch
        *tiny_overrides("bahdanau", "threads=1", "trainer.max_steps=8", "trainer.max_epochs=10"),
        "callbacks.last_checkpoint.every_n_train_steps=2",
        "callbacks.last_checkpoint.keep_last=3",
        "callbacks.early_stopping=null",
        f"hydra.run.dir={run_dir}",
        f"paths.cache_dir={cache_dir}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    checkpoints = run_dir / "checkpoints"
    kept = sorted(p.name for p in checkpoints.glob("step-*.ckpt"))
    # written after updates 2, 3 (validation), 4, 6 (validation), 8: the last three stay
    assert kept == ["step-0000004.ckpt", "step-0000006.ckpt", "step-0000008.ckpt"]
    for name in kept:
        state = torch.load(checkpoints / name, map_location="cpu", weights_only=False)
        assert state["global_step"] == int(name[5:12])
    last = torch.load(checkpoints / "last.ckpt", map_location="cpu", weights_only=False)
    newest = torch.load(checkpoints / kept[-1], map_location="cpu", weights_only=False)
    assert all(torch.equal(last["state_dict"][k], v) for k, v in newest["state_dict"].items())
    averaged = tmp_path / "avg.ckpt"
    proc = run_cli(
        "average_checkpoints", *(str(checkpoints / n) for n in kept), "--out", str(averaged)
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert averaged.is_file()


def test_a_negative_keep_last_is_one_line(tmp_path):
    proc = run_cli(
        "train",
        *tiny_overrides("bahdanau", "callbacks.last_checkpoint.keep_last=-1"),
        f"hydra.run.dir={tmp_path / 'run'}",
    )
    assert proc.returncode == 2
    assert "callbacks.last_checkpoint.keep_last=-1: expected >= 0" in proc.stderr
