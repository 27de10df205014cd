"""conf/model/{plain,bahdanau,luong}.yaml compose, instantiate, take command-line overrides,
and take every value from the config files (one place for each default)."""

from __future__ import annotations

import inspect
from pathlib import Path

import hydra.utils
import pytest
import torch
from config_values import module_settings
from hydra import compose, initialize_config_dir
from hydra.errors import InstantiationException
from omegaconf import OmegaConf

from seq2seq_lab.checkpoint import DATAMODULE_KEY, load_checkpoint
from seq2seq_lab.config import model_config as plain_model_config
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.attention.additive import ConcatAdditiveAttention, FeedForwardAttention
from seq2seq_lab.models.attention.local import LocalPredictiveAttention
from seq2seq_lab.models.attention.multiplicative import DotAttention, LocationAttention
from seq2seq_lab.models.recurrent.base import RecurrentNetwork
from seq2seq_lab.training.module import Seq2SeqModule

CONF = Path(__file__).resolve().parents[1] / "conf"
MODELS = ["plain", "bahdanau", "luong"]


def model_config(*overrides: str):
    """cfg.model of the real train config, as the command line would compose it."""
    with initialize_config_dir(config_dir=str(CONF), version_base=None):
        return compose(config_name="train", overrides=list(overrides)).model


def build(cfg):
    return hydra.utils.instantiate(cfg, src_vocab_size=20, tgt_vocab_size=30, _convert_="all")


@pytest.mark.parametrize("name", MODELS)
def test_config_instantiates_the_family(name):
    net = build(model_config(f"model={name}", "model.hidden_size=16", "model.embedding_dim=8"))
    assert net.family == name
    assert net.src_vocab_size == 20 and net.tgt_vocab_size == 30


@pytest.mark.parametrize("name", MODELS)
def test_each_family_config_holds_every_shared_option_once(name):
    """The shared recurrent options come from one file (conf/model/_recurrent.yaml): every
    family's composed config has exactly RecurrentNetwork's options plus the family's own."""
    cfg = OmegaConf.to_container(model_config(f"model={name}"))
    cls = hydra.utils.get_class(cfg.pop("_target_"))
    shared = set(inspect.signature(RecurrentNetwork).parameters) - {
        "src_vocab_size",
        "tgt_vocab_size",
    }
    own = set(inspect.signature(cls).parameters) - {"options"}
    assert set(cfg) == shared | own
    family_file = OmegaConf.load(CONF / "model" / f"{name}.yaml")
    assert not set(family_file) & {"hidden_size", "embedding_dim", "dropout", "tie_embeddings"}


@pytest.mark.parametrize(
    "override,attribute,expected",
    [
        ("model=bahdanau model.attention.form=concat", None, ConcatAdditiveAttention),
        ("model=bahdanau model.attention.form=feedforward", None, FeedForwardAttention),
        ("model=luong model.attention.score=dot", None, DotAttention),
        ("model=luong model.attention.score=location", None, LocationAttention),
        ("model=luong model.attention.window=local_p", None, LocalPredictiveAttention),
        (
            "model=luong model.attention.window=local_p model.attention.score=dot",
            "scorer",
            DotAttention,
        ),
    ],
)
def test_command_line_overrides_pick_the_mechanism(override, attribute, expected):
    net = build(model_config(*override.split()))
    mechanism = net.attention if attribute is None else getattr(net.attention, attribute)
    assert type(mechanism) is expected


def test_scalar_overrides_reach_the_network():
    net = build(
        model_config(
            "model=luong",
            "model.input_feeding=false",
            "model.cell=gru",
            "model.num_layers=2",
            "model.attention.window=local_m",
            "model.attention.window_size=3",
        )
    )
    assert net.input_feeding is False and net.attention.window_size == 3
    assert net.decoder_rnn.num_layers == 2 and net.cell == "gru"


@pytest.mark.parametrize(
    "overrides,message",
    [
        (["model=bahdanau", "model.attention.form=bogus"], "concat, separate, feedforward"),
        (["model=luong", "model.attention.window=wide"], "global, local_m, local_p"),
        (["model=plain", "model.cell=lstmm"], "lstm, gru, rnn"),
        (
            ["model=luong", "model.attention.score=concat", "model.attention.scaled=true"],
            "model.attention.score=concat has no such scale",
        ),  # fmt: skip
        (["model=luong", "model.attention.scaled=1"], "must be true or false"),
        (["model=luong", "model.attention.init_scale=0"], "must be a positive number"),
        (
            ["model=luong", "model.attention.score=concat", "model.attention.init_scale=0.1"],
            "model.attention.score=concat has none",
        ),  # fmt: skip
    ],
)
def test_invalid_choices_raise_config_errors(overrides, message):
    """hydra wraps constructor errors in InstantiationException; the ConfigError is its cause
    (the lead's seq2seq_lab.config.instantiate unwraps it for the one-line message)."""
    with pytest.raises(InstantiationException) as caught:
        build(model_config(*overrides))
    assert isinstance(caught.value.__cause__, ConfigError)
    assert message in str(caught.value.__cause__)


def test_a_luong_checkpoint_from_before_the_scale_option_loads_unscaled(tmp_path):
    """Checkpoints written before model.attention.scaled existed lack the key; they load with
    the unscaled score their code trained (checkpoint.OLD_CHECKPOINT_LUONG_ATTENTION)."""
    network = {
        **plain_model_config("luong", hidden_size=8, embedding_dim=4),
        "src_vocab_size": 11,
        "tgt_vocab_size": 13,
    }
    module = Seq2SeqModule(
        network=network,
        optimizer={"_target_": "torch.optim.Adam", "lr": 1e-3},
        schedule={"_target_": "seq2seq_lab.optim.schedules.Constant"},
        **module_settings(),
    )
    hparams = dict(module.hparams)
    old_attention = {
        k: v for k, v in network["attention"].items() if k not in ("scaled", "init_scale")
    }
    hparams["network"] = {**network, "attention": old_attention}
    path = tmp_path / "old.ckpt"
    torch.save({"hyper_parameters": hparams, "state_dict": module.state_dict(),
                DATAMODULE_KEY: {}}, path)  # fmt: skip
    loaded = load_checkpoint(path)
    assert loaded.module.network.attention.factor == 1.0


def test_a_transformer_checkpoint_from_before_the_init_option_loads_as_xavier(tmp_path):
    """Checkpoints written before model.init existed lack the key; their learned position
    tables entered unscaled (init=xavier, checkpoint.OLD_CHECKPOINT_TRANSFORMER), which the
    paper scheme would multiply by sqrt(D)."""
    network = {
        **plain_model_config("transformer", d_model=16, heads=2, d_ff=32, encoder_layers=1,
                             decoder_layers=1, positions="learned"),
        "src_vocab_size": 11,
        "tgt_vocab_size": 13,
    }  # fmt: skip
    module = Seq2SeqModule(
        network=network,
        optimizer={"_target_": "torch.optim.Adam", "lr": 1e-3},
        schedule={"_target_": "seq2seq_lab.optim.schedules.Constant"},
        **module_settings(),
    )
    hparams = dict(module.hparams)
    hparams["network"] = {k: v for k, v in network.items() if k != "init"}
    path = tmp_path / "old.ckpt"
    torch.save({"hyper_parameters": hparams, "state_dict": module.state_dict(),
                DATAMODULE_KEY: {}}, path)  # fmt: skip
    positions = load_checkpoint(path).module.network.tgt_positions
    assert positions.scale == 1.0
