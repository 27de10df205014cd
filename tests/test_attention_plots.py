"""One producer of attention heatmaps (the AttentionPlots callback) for every family, through
the real configs; and the module's retired ``attention_plots`` setting still loads."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from config_values import module_settings
from conftest import compose_config, tiny_overrides

from seq2seq_lab.callbacks.attention_plots import AttentionPlots
from seq2seq_lab.checkpoint import DATAMODULE_KEY, load_checkpoint
from seq2seq_lab.config import model_config
from seq2seq_lab.data.batching import EncodedPair, collate
from seq2seq_lab.pipeline.training import train
from seq2seq_lab.training.module import Seq2SeqModule

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ONE_VALIDATION = ("trainer.max_steps=3", "trainer.max_epochs=1", "test=false")


pytestmark = pytest.mark.usefixtures("one_thread")


def _pngs(root, pattern: str) -> list[str]:
    paths = sorted(root.glob(pattern))
    assert all(p.read_bytes().startswith(PNG_SIGNATURE) for p in paths)
    return [str(p.relative_to(root)) for p in paths]


@pytest.mark.slow
@pytest.mark.parametrize("family", ["bahdanau", "transformer"])
def test_the_callback_draws_each_familys_attention_after_validation(family, tmp_path, cache_dir):
    overrides = tiny_overrides(family, *ONE_VALIDATION, "callbacks.attention_plots.sentences=2")
    results = train(compose_config("train", overrides, tmp_path, cache_dir))
    steps = [int(step) for step, _ in results["training"]["validations"]]
    assert steps and 0 not in steps  # after the training's validation, not the sanity check
    # the first two validation sentences (corpus order): the hypothesis's alignment, and for
    # the Transformer the cross-attention grid too
    assert _pngs(tmp_path, "attention/*/*.png") == [
        f"attention/step{step:07d}/val{i}.png" for step in steps for i in (0, 1)
    ]
    grids = [
        f"diagnostics/cross_attention/step{step:07d}_val{i}.png" for step in steps for i in (0, 1)
    ]
    assert _pngs(tmp_path, "diagnostics/cross_attention/*.png") == (
        grids if family == "transformer" else []
    )


@pytest.mark.slow
def test_without_callbacks_nothing_is_drawn(tmp_path, cache_dir):
    overrides = ["model=bahdanau", "scale=smoke", "callbacks=none", *ONE_VALIDATION]
    assert train(compose_config("train", overrides, tmp_path, cache_dir))["training"]["validations"]
    assert not (tmp_path / "attention").exists()
    assert not (tmp_path / "diagnostics").exists()


def test_the_first_sentences_of_the_corpus_are_kept_whatever_the_batch_order():
    """Validation batches come length-sorted: the first sentences may be in any of them."""
    pairs = [EncodedPair(i, [10 + i] * (1 + i % 3), [20 + i] * (2 + i % 2)) for i in range(8)]
    callback = AttentionPlots(sentences=3)
    trainer = SimpleNamespace(sanity_checking=False, is_global_zero=True)
    callback.on_validation_epoch_start(trainer, None)
    for rows in ([5, 3, 7], [6, 0], [4, 2, 1]):
        batch = collate([pairs[i] for i in rows])
        callback.on_validation_batch_start(trainer, None, batch, 0)
    assert sorted(callback._first.values()) == pairs[:3]


def test_a_negative_number_of_sentences_is_refused():
    with pytest.raises(ValueError, match="sentences=-1"):
        AttentionPlots(sentences=-1)


def _module(**retired) -> Seq2SeqModule:
    sizes = {"src_vocab_size": 11, "tgt_vocab_size": 13}
    return Seq2SeqModule(
        network={**model_config("bahdanau", hidden_size=8, embedding_dim=4), **sizes},
        optimizer={"_target_": "torch.optim.Adam", "lr": 1e-3},
        schedule={"_target_": "seq2seq_lab.optim.schedules.Constant"},
        **module_settings(),
        **retired,
    )


def test_a_checkpoint_that_sets_the_retired_attention_plots_loads(tmp_path):
    module = _module()
    # the hyper-parameters of a checkpoint written while the module read attention_plots
    old = {**module.hparams, "attention_plots": 2}
    torch.save({"hyper_parameters": old, "state_dict": module.state_dict(), DATAMODULE_KEY: {}},
               tmp_path / "old.ckpt")  # fmt: skip
    loaded = load_checkpoint(tmp_path / "old.ckpt").module
    assert "attention_plots" not in loaded.hparams  # not carried into new checkpoints
    for key, value in module.state_dict().items():
        assert torch.equal(loaded.state_dict()[key], value)
    with pytest.raises(TypeError, match="attention_plot"):
        _module(attention_plot=2)  # any other unknown keyword is still an error
