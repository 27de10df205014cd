"""conf/model/transformer.yaml: composes with the real config tree, instantiates the network,
agrees with the constructor's defaults, and reports bad values against their config keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from seq2seq_lab.config import instantiate
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.transformer.network import TransformerNetwork
from seq2seq_lab.models.transformer.sublayers import PostNormResidual

CONF = Path(__file__).resolve().parents[1] / "conf"


def compose_train(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("train", overrides=["model=transformer", *overrides])


def test_model_picks_adam_098_and_warmup_unless_told_otherwise() -> None:
    cfg = compose_train()
    assert cfg.optim.betas == [0.9, 0.98]
    assert cfg.schedule._target_.endswith("InverseSqrt")
    explicit = compose_train("optim=adam", "schedule=constant")
    assert explicit.optim.betas == [0.9, 0.999]
    assert explicit.schedule._target_.endswith("Constant")


def test_overrides_reach_the_network() -> None:
    cfg = compose_train(
        "model.attention.scale=false", "model.norm=post", "model.positions=relative",
        "model.d_model=32", "model.d_ff=64", "model.heads=2", "model.tie_embeddings=all",
    )  # fmt: skip
    net = instantiate(cfg.model, key="model", src_vocab_size=11, tgt_vocab_size=11)
    assert isinstance(net, TransformerNetwork) and net.family == "transformer"
    assert net.encoder[0].self_attn.attention.scale is False
    assert isinstance(net.decoder[0].ffn_residual, PostNormResidual)
    assert net.encoder[0].relative is not None and net.src_positions is None
    assert net.src_embed.weight is net.output.weight


def test_heads_not_dividing_d_model_is_a_config_error() -> None:
    cfg = compose_train("model.heads=3")
    d_model = cfg.model.d_model
    with pytest.raises(ConfigError, match=rf"model\.heads=3 must divide model\.d_model={d_model}"):
        instantiate(cfg.model, key="model", src_vocab_size=11, tgt_vocab_size=11)
