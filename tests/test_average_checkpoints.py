"""Checkpoint averaging: the mean of the weights, loadable by eval, refusing mixed runs."""

from __future__ import annotations

import pytest
import torch
from config_values import module_settings

from seq2seq_lab.average_checkpoints import average_checkpoints, main
from seq2seq_lab.checkpoint import DATAMODULE_KEY, load_checkpoint
from seq2seq_lab.config import model_config
from seq2seq_lab.errors import CheckpointError
from seq2seq_lab.training.module import Seq2SeqModule

TOKENIZERS = {"src_tokenizer": {"kind": "word", "vocab": ["a", "b"]}}


def network(hidden: int = 8) -> dict:
    sizes = {"src_vocab_size": 11, "tgt_vocab_size": 13}
    return {**model_config("bahdanau", hidden_size=hidden, embedding_dim=4), **sizes}


def save(path, seed: int, *, hidden: int = 8, tokenizers=TOKENIZERS):
    torch.manual_seed(seed)
    module = Seq2SeqModule(
        network=network(hidden),
        optimizer={"_target_": "torch.optim.Adam", "lr": 1e-3},
        schedule={"_target_": "seq2seq_lab.optim.schedules.Constant"},
        **module_settings(),
    )
    torch.save(
        {
            "hyper_parameters": dict(module.hparams),
            "state_dict": module.state_dict(),
            DATAMODULE_KEY: tokenizers,
            "global_step": seed,
        },
        path,
    )
    return module.state_dict()


def test_the_average_is_the_mean_of_the_weights_and_loads(tmp_path):
    states = [save(tmp_path / f"{i}.ckpt", seed=i) for i in range(3)]
    averaged = average_checkpoints([tmp_path / f"{i}.ckpt" for i in range(3)])
    for key, value in averaged["state_dict"].items():
        expected = sum(s[key].double() for s in states) / 3
        torch.testing.assert_close(value.double(), expected, rtol=0, atol=1e-6)
        assert value.dtype == states[0][key].dtype
    assert averaged[DATAMODULE_KEY] == TOKENIZERS
    assert averaged["global_step"] == 2  # the last checkpoint's
    assert main([*map(str, sorted(tmp_path.glob("*.ckpt"))), "--out", str(tmp_path / "a.pt")]) == 0
    loaded = load_checkpoint(tmp_path / "a.pt")
    assert loaded.family == "bahdanau"
    torch.testing.assert_close(
        loaded.module.state_dict()["network.output.weight"],
        averaged["state_dict"]["network.output.weight"],
    )


def test_one_checkpoint_averages_to_itself(tmp_path):
    state = save(tmp_path / "0.ckpt", seed=0)
    averaged = average_checkpoints([tmp_path / "0.ckpt"])
    for key, value in state.items():
        assert torch.equal(averaged["state_dict"][key], value)


def test_checkpoints_of_different_models_are_refused(tmp_path, capsys):
    save(tmp_path / "small.ckpt", seed=0, hidden=8)
    save(tmp_path / "large.ckpt", seed=1, hidden=16)
    with pytest.raises(CheckpointError, match=r"large\.ckpt: its model config differs"):
        average_checkpoints([tmp_path / "small.ckpt", tmp_path / "large.ckpt"])
    assert main([str(tmp_path / "small.ckpt"), str(tmp_path / "large.ckpt"), "--out", "x"]) == 2
    assert "model config differs" in capsys.readouterr().err


def test_checkpoints_with_different_vocabularies_are_refused(tmp_path):
    save(tmp_path / "a.ckpt", seed=0)
    save(tmp_path / "b.ckpt", seed=1, tokenizers={"src_tokenizer": {"kind": "word"}})
    with pytest.raises(CheckpointError, match="tokenizers differ"):
        average_checkpoints([tmp_path / "a.ckpt", tmp_path / "b.ckpt"])


def test_a_missing_checkpoint_is_named(tmp_path):
    save(tmp_path / "a.ckpt", seed=0)
    with pytest.raises(CheckpointError, match=r"nope\.ckpt: no such checkpoint"):
        average_checkpoints([tmp_path / "a.ckpt", tmp_path / "nope.ckpt"])


def test_last_n_averages_the_latest_updates_a_run_keeps(tmp_path, capsys):
    """``RUN --last N``: the N latest ``checkpoints/step-<update>.ckpt`` (fairseq's
    --num-update-checkpoints), by update, not by name length or age."""
    folder = tmp_path / "run" / "checkpoints"
    folder.mkdir(parents=True)
    for seed, step in enumerate((200, 400, 1000, 1200)):
        save(folder / f"step-{step:07d}.ckpt", seed=seed)
    save(folder / "last.ckpt", seed=9)  # not one of the kept updates
    out = tmp_path / "avg.ckpt"
    assert main([str(tmp_path / "run"), "--last", "2", "--out", str(out)]) == 0
    assert capsys.readouterr().out == (
        f"averaged 2 checkpoints (step-0001000.ckpt, step-0001200.ckpt) -> {out}\n"
    )
    expected = average_checkpoints([folder / "step-0001000.ckpt", folder / "step-0001200.ckpt"])
    averaged = torch.load(out, weights_only=True)
    for key, value in expected["state_dict"].items():
        assert torch.equal(averaged["state_dict"][key], value)
    assert main([str(tmp_path / "run"), "--last", "5", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: --last 5: {folder} keeps 4 checkpoints (step-*.ckpt); train with "
        "callbacks.last_checkpoint.keep_last=5 to keep 5\n"
    )
