"""Training runs through the real configs: one step of every family, reproducibility,
resuming, divergence recorded as a result."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import torch
from conftest import FAMILIES, accelerator_override, compose_config, tiny_overrides

from seq2seq_lab.checkpoint import load_checkpoint
from seq2seq_lab.pipeline.building import build_datamodule
from seq2seq_lab.pipeline.training import train
from seq2seq_lab.record import environment
from seq2seq_lab.training.convergence import late_gain

pytestmark = pytest.mark.slow


def run(tmp_path: Path, cache_dir: Path, *overrides: str, family: str = "bahdanau") -> dict:
    cfg = compose_config("train", tiny_overrides(family, *overrides), tmp_path, cache_dir)
    return train(cfg)


@pytest.mark.cuda
@pytest.mark.parametrize("family", FAMILIES)
def test_fast_dev_run_trains_and_tests_every_family(family, tmp_path, cache_dir, device):
    results = run(
        tmp_path, cache_dir, "++trainer.fast_dev_run=true", accelerator_override(device),
        family=family,
    )  # fmt: skip
    assert results["status"] == "completed"
    assert results["family"] == family
    on_disk = json.loads((tmp_path / "results.json").read_text())
    for key in ("status", "seed", "sacrebleu_signature", "versions", "hardware"):
        assert key in on_disk
    # the recorded BLEU is sacrebleu's on the written hypotheses and the references that
    # test_set.json names (the generated task's, by its data config)
    from sacrebleu.metrics import BLEU

    from seq2seq_lab.data.test_set import read_test_lines

    split = on_disk["test"]["split"]
    hyps, refs = (read_test_lines(tmp_path, kind, split) for kind in ("hypotheses", "references"))
    assert on_disk["test"]["bleu"] == BLEU().corpus_score(hyps, [refs]).score
    assert on_disk["test"]["bleu_by_length"]
    timing = on_disk["timing"]
    assert timing["train_tokens_per_second"] > 0
    # the loop clock adds batch fetching to the step clock, so it is never shorter
    assert timing["train_loop_seconds"] >= timing["train_step_seconds"] > 0
    assert 0 < timing["train_loop_tokens_per_second"] <= timing["train_tokens_per_second"]
    assert (tmp_path / "hypotheses.test.txt").read_text().count("\n") == 12
    # the synthetic task's extrapolation split, scored apart from the test split
    extrapolation = on_disk["extra_tests"]["extrapolation"]
    hyps = (tmp_path / "hypotheses.extrapolation.txt").read_text(encoding="utf-8").splitlines()
    assert extrapolation["sentences"] == len(hyps) == 12
    assert extrapolation["decoding"]["beam_size"] == 1


@pytest.mark.cuda
def test_bf16_mixed_trains_with_clipping_and_the_fused_optimiser(tmp_path, cache_dir, device):
    # bf16 autocast runs on CPUs too (AMX/AVX512-BF16 make it faster); no gradient scaler, so
    # the fused optimiser is kept and the module clips itself (Lightning would refuse). oneDNN
    # has no bf16 LSTM kernel without AVX512-BF16 or AMX (an AVX2-only EPYC cannot create the
    # primitive), so there the recurrent family is replaced by the Transformer; cuDNN has one
    bf16_kernels = {"AMX-BF16", "AVX512-BF16"} & set(environment.cpu_features())
    results = run(
        tmp_path,
        cache_dir,
        "++trainer.fast_dev_run=true",
        "trainer.precision=bf16-mixed",
        "trainer.gradient_clip_val=1.0",
        accelerator_override(device),
        family="luong" if bf16_kernels or device == "cuda" else "transformer",
    )
    assert results["status"] == "completed"
    assert results["test"]["sentences"] == 12  # the whole smoke test set, decoded under bf16


def _losses(run_dir: Path) -> list[float]:
    with open(run_dir / "csv" / "metrics.csv", encoding="utf-8") as f:
        return [float(r["train/loss"]) for r in csv.DictReader(f) if r.get("train/loss")]


def test_same_seed_gives_identical_losses_and_bleu(tmp_path, cache_dir):
    args = ("trainer.max_steps=8", "trainer.max_epochs=8", "seed=7")
    first = run(tmp_path / "a", cache_dir, *args)
    second = run(tmp_path / "b", cache_dir, *args)
    run(tmp_path / "c", cache_dir, "trainer.max_steps=8", "trainer.max_epochs=8", "seed=8")
    assert _losses(tmp_path / "a") == _losses(tmp_path / "b")
    assert len(_losses(tmp_path / "a")) == 8
    assert first["test"]["bleu"] == second["test"]["bleu"]
    assert first["test"]["ppl"] == second["test"]["ppl"]
    assert _losses(tmp_path / "a") != _losses(tmp_path / "c")


@pytest.mark.parametrize("max_tokens", [64, 96])
def test_every_epoch_is_served_whole_and_validated_at_its_end(max_tokens, tmp_path, cache_dir):
    # Token-budget batches: each epoch has its own number of batches (at these budgets on
    # version 1's smoke data, [26, 26, 27, 27, 26, 27] and [19, 19, 19, 19, 18, 19]). Every
    # batch must be served and validation must run once per epoch, after its last batch,
    # whatever the epoch's length (a loader built once was cut to epoch 0's length, and
    # never validated in a shorter epoch).
    epochs = 6
    args = ("data=synthetic_v1", f"data.max_tokens={max_tokens}", "data.pool_factor=2",
            "trainer.max_steps=-1", f"trainer.max_epochs={epochs}", "test=false",
            "~callbacks.early_stopping")  # fmt: skip
    cfg = compose_config("train", tiny_overrides("bahdanau", *args), tmp_path, cache_dir)
    datamodule = build_datamodule(cfg.data)
    datamodule.prepare_data()
    datamodule.setup("fit")
    sampler = datamodule.train_dataloader().batch_sampler
    lengths = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        lengths.append(len(sampler))
    assert len(set(lengths)) > 1, lengths  # the case under test
    results = train(cfg)
    assert results["training"]["steps"] == sum(lengths)
    assert results["training"]["stopped_by"] == f"trainer.max_epochs={epochs}"
    with open(tmp_path / "csv" / "metrics.csv", encoding="utf-8") as f:
        validated_at = [int(r["step"]) for r in csv.DictReader(f) if r.get("val/bleu")]
    ends = [sum(lengths[: e + 1]) for e in range(epochs)]
    # Lightning logs validation at the step of the epoch's last update (0-based: end - 1)
    assert validated_at == [end - 1 for end in ends], (validated_at, ends)
    # results.json keeps every validation (update count, BLEU) for the convergence check
    recorded = results["training"]["validations"]
    assert [step for step, _ in recorded] == ends
    assert results["training"]["late_val_gain"] == late_gain(recorded)


def test_resume_from_an_explicit_checkpoint(tmp_path, cache_dir):
    run(tmp_path / "a", cache_dir, "trainer.max_steps=4", "trainer.max_epochs=20", "test=false")
    last = tmp_path / "a" / "checkpoints" / "last.ckpt"
    raw = torch.load(last, weights_only=True)  # plain containers only
    assert 0 < raw["global_step"] <= 4
    resumed = run(
        tmp_path / "b",
        cache_dir,
        "trainer.max_steps=8",
        "trainer.max_epochs=20",
        f"ckpt_path={last}",
    )
    assert resumed["status"] == "completed"
    assert resumed["training"]["steps"] == 8
    assert resumed["training"]["stopped_by"] == "trainer.max_steps=8"  # the update budget


def test_diverging_run_is_recorded_not_raised(tmp_path, cache_dir):
    results = run(
        tmp_path,
        cache_dir,
        "model.norm=post",
        "schedule=constant",
        "optim.lr=1000",
        "trainer.gradient_clip_val=null",
        "trainer.max_steps=60",
        "module.divergence.patience=3",
        family="transformer",
    )
    assert results["status"] == "diverged"
    assert "loss" in results["status_reason"]
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk["status"] == "diverged"
    assert _losses(tmp_path)  # the loss curve is kept


def test_wandb_logger_runs_offline_and_is_finished(tmp_path, cache_dir):
    wandb = pytest.importorskip("wandb")
    results = run(tmp_path, cache_dir, "logger=wandb", "trainer.max_steps=2")
    assert results["status"] == "completed"
    assert list((tmp_path / "wandb").glob("offline-run-*")), "no offline W&B run written"
    assert (tmp_path / "csv" / "metrics.csv").is_file()  # CSV stays on beside W&B
    hparams = (tmp_path / "csv" / "hparams.yaml").read_text()
    assert "data_summary." in hparams and "model._target_" in hparams  # summary + flat config
    assert wandb.run is None  # finished, so the next job of a multirun starts a fresh run


def test_wall_clock_checkpoints_save_each_mark_then_stop(tmp_path, cache_dir):
    # marks of a few milliseconds: every one is passed within the first steps
    results = run(
        tmp_path,
        cache_dir,
        "+callbacks.wall_clock._target_=seq2seq_lab.callbacks.wall_clock.WallClockCheckpoints",
        "+callbacks.wall_clock.minutes=[0.00001,0.00002]",
        f"+callbacks.wall_clock.dirpath={tmp_path}/snapshots",
        "trainer.max_epochs=50",
        "test=false",
    )
    saved = sorted(p.name for p in (tmp_path / "snapshots").glob("*.ckpt"))
    assert saved == ["minute-1e-05.ckpt", "minute-2e-05.ckpt"]
    assert results["training"]["steps"] < 50 * 3  # stopped at the last mark, not at max_epochs
    loaded = load_checkpoint(tmp_path / "snapshots" / saved[-1])
    assert loaded.family == "bahdanau"
