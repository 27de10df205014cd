"""The divergence rule (training/divergence.py): a run whose loss exploded is recorded as
diverged whatever ended it, and such a run is a result (exit code 0), not a crash."""

from __future__ import annotations

import json

import pytest
from conftest import compose_config, run_cli, tiny_overrides

from seq2seq_lab.pipeline.training import train
from seq2seq_lab.training.divergence import DivergenceRule


def rule_after(losses: list[float], patience: int = 5) -> tuple[DivergenceRule, str | None]:
    rule = DivergenceRule(max_loss_ratio=3.0, patience=patience)
    reason = None
    for step, loss in enumerate(losses):
        reason = reason or rule.check(loss, step)
    return rule, reason


def test_losses_above_the_limit_for_patience_steps_diverge_during_training():
    _, reason = rule_after([2.0, 7.0, 7.0, 7.0, 7.0, 7.0])
    assert reason == "loss 7 above 6 for 5 steps (step 5)"
    _, reason = rule_after([2.0, 3.0, float("nan")])
    assert reason == "non-finite loss (nan) at step 2"


def test_a_run_stopped_inside_the_patience_with_its_loss_above_the_limit_is_diverged():
    # three steps above 3 x 2.0: fewer than the patience, but training ended there
    rule, reason = rule_after([2.0, 1.5, 7.0, 9.0, 8.0])
    assert reason is None
    assert rule.at_end(5, "early stopping on val/bleu") == (
        "loss above 6 (3 x the first step's 2) for the last 3 steps when early stopping on "
        "val/bleu ended training after 5 steps"
    )


@pytest.mark.parametrize(
    "losses",
    [[], [2.0, 1.5, 1.0], [2.0, 9.0, 9.0, 9.0, 5.0]],
    ids=["no-step", "healthy", "recovered-below-the-limit"],
)
def test_a_run_whose_last_loss_is_below_the_limit_is_not_diverged_at_its_end(losses):
    rule, reason = rule_after(losses)
    assert reason is None and rule.at_end(len(losses), "trainer.max_steps=5") is None


# ------------------------------------------------------------------------ whole training runs
EXPLODING = ("optim.lr=1000", "schedule=constant", "trainer.gradient_clip_val=null")


@pytest.mark.slow
@pytest.mark.parametrize(
    "stop,overrides",
    [
        (
            "early stopping on val/bleu",
            ["callbacks.early_stopping.patience=1", "trainer.max_steps=-1"],
        ),
        ("trainer.max_steps=8", ["trainer.max_steps=8"]),
        (
            "trainer.max_time",
            # no validation: the clock (from the first step) is spent on training steps only
            [
                "~callbacks.early_stopping",
                "~callbacks.model_checkpoint",
                "+trainer.limit_val_batches=0",
                "trainer.max_steps=-1",
                "trainer.max_time={seconds:3}",
            ],
        ),
    ],
    ids=["early-stopping", "max-steps", "max-time"],
)
def test_an_exploded_loss_is_diverged_whatever_stopped_the_run(
    stop, overrides, tmp_path, cache_dir
):
    # lr 1000 takes the loss to ~3,000 x the first step's at once; the patience of 10,000
    # steps means the rule's first part never fires: the stop comes first
    cfg = compose_config(
        "train",
        tiny_overrides(
            "bahdanau",
            *EXPLODING,
            *overrides,
            "trainer.max_epochs=1000",
            "module.divergence.patience=10000",
            "test=false",
        ),
        tmp_path,
        cache_dir,
    )
    results = train(cfg)
    assert results["status"] == "diverged", results.get("status_reason")
    assert f"when {stop} ended training" in results["status_reason"]
    assert json.loads((tmp_path / "results.json").read_text())["status"] == "diverged"


@pytest.mark.slow
def test_the_issue_post_ln_run_at_lr_1000_is_diverged_tested_and_exits_0(tmp_path):
    # issue 20: early stopping ended this run after ~20 steps (patience 50) and test decoding
    # of its broken weights crashed beam search: status failed, exit code 1
    proc = run_cli(
        "train",
        *tiny_overrides(
            "transformer",
            "model.norm=post",
            "optim.lr=1000",
            "trainer.max_steps=200",
            "trainer.max_epochs=1000",
            "threads=1",
        ),  # fmt: skip
        f"hydra.run.dir={tmp_path}",
        f"paths.cache_dir={tmp_path / 'cache'}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["status"] == "diverged"
    assert "early stopping on val/bleu ended training" in results["status_reason"]
    assert results["test"]["sentences"] == 12  # every test sentence decoded and scored
    hypotheses = (tmp_path / "hypotheses.test.txt").read_text(encoding="utf-8")
    assert hypotheses.count("\n") == 12


@pytest.mark.slow
@pytest.mark.parametrize("beam_size", [1, 3])
def test_eval_of_a_checkpoint_with_nan_weights_scores_every_sentence(beam_size, tmp_path):
    # the weights of a run that blew up: every logit NaN, no finite hypothesis anywhere
    import torch

    from seq2seq_lab.pipeline.evaluation import evaluate

    run_dir = tmp_path / "run"
    cfg = compose_config(
        "train",
        tiny_overrides("bahdanau", "trainer.max_steps=1", "test=false"),
        run_dir,
        tmp_path / "cache",
    )
    train(cfg)
    raw = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
    raw["state_dict"] = {
        k: v.fill_(float("nan")) if v.is_floating_point() else v
        for k, v in raw["state_dict"].items()
    }
    broken = tmp_path / "nan.ckpt"
    torch.save(raw, broken)
    out = tmp_path / "eval"
    cfg = compose_config("eval", [f"ckpt_path={broken}", f"decoding.beam_size={beam_size}"], out)
    results = evaluate(cfg)
    assert results["test"]["sentences"] == 12 and results["test"]["bleu"] == 0.0
    assert (out / "hypotheses.test.txt").read_text(encoding="utf-8") == "\n" * 12
