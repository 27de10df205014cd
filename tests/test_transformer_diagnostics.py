"""Diagnostics: gradient norms at init (Xiong et al.), attention entropy (E5), layer similarity,
cross-attention maps, and the Lightning callback that runs them during training (the maps are
drawn by the AttentionPlots callback: tests/test_attention_plots.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import lightning as L
import pytest
import torch
from config_values import callback_settings
from torch import nn
from torch.utils.data import DataLoader

from seq2seq_lab.analysis.attention_maps import cross_attention_maps, plot_cross_attention
from seq2seq_lab.analysis.entropy import attention_entropy, mean_entropy
from seq2seq_lab.analysis.gradients import gradient_norms, plot_gradient_norms, teacher_forced_loss
from seq2seq_lab.analysis.similarity import layer_similarity
from seq2seq_lab.callbacks.diagnostics import TransformerDiagnostics
from seq2seq_lab.config import build_network
from seq2seq_lab.data.batch import Batch
from seq2seq_lab.data.specials import BOS_ID, EOS_ID, PAD_ID
from seq2seq_lab.models.transformer.network import TransformerNetwork

V = 40


pytestmark = pytest.mark.usefixtures("one_thread")


def make_batch(b: int = 8, s: int = 9, t: int = 8, seed: int = 0) -> Batch:
    """Random pairs; row 0 has a shorter source and a shorter target (padding in both)."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, V, (b, s), generator=g)
    src[:, -1] = EOS_ID
    src[0, 5], src[0, 6:] = EOS_ID, PAD_ID
    y = torch.randint(4, V, (b, t), generator=g)
    tgt_in = torch.cat([torch.full((b, 1), BOS_ID), y], dim=1)
    tgt_out = torch.cat([y, torch.full((b, 1), EOS_ID)], dim=1)
    tgt_in[0, 5:], tgt_out[0, 4], tgt_out[0, 5:] = PAD_ID, EOS_ID, PAD_ID
    return Batch(src=src, src_mask=src != PAD_ID, tgt_in=tgt_in, tgt_out=tgt_out,
                 index=torch.arange(b))  # fmt: skip


def small(**overrides) -> TransformerNetwork:
    args = dict(src_vocab_size=V, tgt_vocab_size=V, d_model=32, heads=2, d_ff=64,
                encoder_layers=2, decoder_layers=2)  # fmt: skip
    args.update(overrides)
    return build_network("transformer", **args)


def test_gradient_norm_keys_follow_the_blocks() -> None:
    torch.manual_seed(0)
    norms = gradient_norms(small(decoder_layers=3), make_batch())
    assert list(norms) == [
        "encoder.0.self_attn", "encoder.0.ffn", "encoder.1.self_attn", "encoder.1.ffn",
        "decoder.0.self_attn", "decoder.0.cross_attn", "decoder.0.ffn",
        "decoder.1.self_attn", "decoder.1.cross_attn", "decoder.1.ffn",
        "decoder.2.self_attn", "decoder.2.cross_attn", "decoder.2.ffn",
    ]  # fmt: skip
    assert all(value > 0 for value in norms.values())


def test_gradient_norms_leave_gradients_and_mode_alone() -> None:
    torch.manual_seed(1)
    net = small().train()
    batch = make_batch()
    teacher_forced_loss(net, batch).backward()
    before = {name: p.grad.clone() for name, p in net.named_parameters()}
    ffn = net.decoder[1].ffn.w_2.weight
    manual = ffn.grad.norm()
    norms = gradient_norms(net, batch)
    assert net.training
    for name, p in net.named_parameters():
        torch.testing.assert_close(p.grad, before[name])
    # recomputed in eval mode (no dropout), so it differs from the train-mode gradient above
    assert norms["decoder.1.ffn"] != pytest.approx(float(manual))


def test_post_ln_last_decoder_ffn_gradient_larger_than_pre_ln_at_init() -> None:
    """Xiong et al. 2020: at init the FFN gradient norm grows toward the output under post-LN
    and stays flat under pre-LN, so post-LN's last FFN gets the larger gradient."""
    batch = make_batch(b=8, s=10, t=9)
    last: dict[str, list[float]] = {"post": [], "pre": []}
    for seed in range(3):
        for norm in ("post", "pre"):
            torch.manual_seed(seed)
            net = small(norm=norm, d_model=64, heads=4, d_ff=128, encoder_layers=6,
                        decoder_layers=6)  # fmt: skip
            last[norm].append(gradient_norms(net, batch)["decoder.5.ffn"])
    assert all(post > pre for post, pre in zip(last["post"], last["pre"]))


def test_unscaled_attention_has_lower_entropy_at_init() -> None:
    """E5: without 1/sqrt(d_k) the scores have variance ~d_k and the softmax saturates."""
    batch = make_batch()
    entropy = {}
    for scale in (True, False):
        torch.manual_seed(2)
        net = small(d_model=64, heads=1, attention={"scale": scale})
        entropy[scale] = mean_entropy(attention_entropy(net, batch))
    for kind in ("encoder.self_attn", "decoder.self_attn", "decoder.cross_attn"):
        assert entropy[False][kind] < 0.6 * entropy[True][kind]


def test_entropy_shapes_and_bounds() -> None:
    torch.manual_seed(3)
    batch = make_batch()
    entropy = attention_entropy(small(heads=4, decoder_layers=3), batch)
    assert [len(entropy["encoder.self_attn"]), len(entropy["decoder.cross_attn"])] == [2, 3]
    assert all(len(layer) == 4 for layers in entropy.values() for layer in layers)
    log_s = torch.log(torch.tensor(9.0)).item()  # at most uniform over the 9 source positions
    assert all(0.0 <= h <= log_s + 1e-5 for layer in entropy["encoder.self_attn"] for h in layer)


def test_layer_similarity_ignores_padding() -> None:
    torch.manual_seed(4)
    net = small(encoder_layers=3, decoder_layers=4).eval()
    batch = make_batch()
    similarity = layer_similarity(net, batch)
    assert len(similarity["encoder"]) == 2 and len(similarity["decoder"]) == 3
    assert all(-1.0 <= v <= 1.0 for values in similarity.values() for v in values)
    # padded source/target positions hold other ids: the figures must not move
    tgt_real = batch.tgt_in != PAD_ID
    padded = Batch(src=batch.src.masked_fill(~batch.src_mask, 7), src_mask=batch.src_mask,
                   tgt_in=batch.tgt_in.masked_fill(~tgt_real, 9), tgt_out=batch.tgt_out,
                   index=batch.index)  # fmt: skip
    again = layer_similarity(net, padded)
    for stack in ("encoder", "decoder"):
        assert again[stack] == pytest.approx(similarity[stack], abs=1e-6)


def test_cross_attention_maps_and_plots(tmp_path) -> None:
    torch.manual_seed(5)
    net = small(heads=2, decoder_layers=2)
    batch = make_batch()
    maps = cross_attention_maps(net, batch, [0, 3])
    assert maps[0].shape == (2, 2, 5, 6)  # layers, heads, real target (incl. EOS), real source
    assert maps[1].shape == (2, 2, 9, 9)
    torch.testing.assert_close(maps[0].sum(-1), torch.ones(2, 2, 5))
    path = plot_cross_attention(maps[0], list("abcde") + ["</s>"], list("vwxy") + ["</s>"],
                                tmp_path / "grid.png", title="t")  # fmt: skip
    assert path.stat().st_size > 0
    profile = gradient_norms(net, batch)
    png = plot_gradient_norms({"a": profile, "b": profile}, tmp_path / "g.png")
    assert png.stat().st_size > 0


# ------------------------------------------------------------------------------- callback
class _Tokenizer:
    def tokens(self, ids: list[int]) -> list[str]:
        return [f"w{i}" for i in ids]


class _DataModule(L.LightningDataModule):
    src_tokenizer = tgt_tokenizer = _Tokenizer()

    def train_dataloader(self) -> DataLoader:
        return DataLoader([make_batch(seed=i) for i in range(3)], batch_size=None)

    def val_dataloader(self) -> DataLoader:
        return DataLoader([make_batch(seed=10)], batch_size=None)


class _Module(L.LightningModule):
    def __init__(self, network: nn.Module) -> None:
        super().__init__()
        self.network = network

    def training_step(self, batch: Batch, batch_idx: int) -> torch.Tensor:
        return teacher_forced_loss(self.network, batch)

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        self.log("val/loss", teacher_forced_loss(self.network, batch))

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=1e-3)


class _NoBlocks(nn.Module):
    """A network without the block structure (like the recurrent families)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = small()

    def teacher_forced(self, *args):
        return self.inner.teacher_forced(*args)


def _fit(
    network: nn.Module, root, *, max_steps: int = 3, sanity_steps: int = 1, probes=()
) -> L.Trainer:
    diagnostics = TransformerDiagnostics(**callback_settings("diagnostics"))
    trainer = L.Trainer(
        max_steps=max_steps, log_every_n_steps=1, val_check_interval=2, default_root_dir=root,
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, num_sanity_val_steps=sanity_steps,
        callbacks=[diagnostics, *probes],
    )  # fmt: skip
    trainer.fit(_Module(network), datamodule=_DataModule())
    return trainer


def _records(root) -> list[dict]:
    path = root / "diagnostics" / "validation.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_callback_writes_and_logs_diagnostics(tmp_path) -> None:
    torch.manual_seed(6)
    trainer = _fit(small(), tmp_path)
    out = tmp_path / "diagnostics"
    init = json.loads((out / "grad_norms_init.json").read_text())
    assert list(init)[0] == "encoder.0.self_attn" and len(init) == 2 * 2 + 2 * 3
    assert (out / "grad_norms_init.png").exists()
    records = _records(tmp_path)
    # at init, then after the validation at step 2 (the sanity check is not recorded)
    assert [(r["step"], r["when"]) for r in records] == [(0, "init"), (2, "validation")]
    assert set(records[1]["entropy"]) == {"encoder.self_attn", "decoder.self_attn",
                                          "decoder.cross_attn"}  # fmt: skip
    # the cross-attention grids are AttentionPlots' alone
    assert sorted(p.name for p in out.iterdir()) == [
        "grad_norms_init.json",
        "grad_norms_init.png",
        "validation.jsonl",
    ]
    metrics = trainer.callback_metrics
    assert "diag/grad_norm/decoder.1.ffn" in metrics
    assert "diag/grad_norm_init/encoder.0.ffn" in metrics
    assert "diag/similarity/encoder.0-1" in metrics
    assert "diag/entropy/decoder.cross_attn.1" in metrics
    assert "diag/entropy_init/decoder.cross_attn.1" in metrics


class _FirstStepProbe(L.Callback):
    """Reads validation.jsonl when the first optimiser step is about to happen."""

    def __init__(self) -> None:
        self.seen: list[dict] | None = None

    def on_before_optimizer_step(self, trainer, pl_module, optimizer) -> None:
        if self.seen is None:
            root = Path(trainer.default_root_dir)
            written = (root / "diagnostics" / "validation.jsonl").exists()
            self.seen = _records(root) if written else []


@pytest.mark.parametrize("sanity_steps", [0, 1])
def test_entropy_at_init_is_recorded_before_any_update(tmp_path, sanity_steps) -> None:
    """E5 reads the untrained network's entropy: the init record is written before the first
    optimiser step, equals the entropy of the initial weights on the first validation batch's
    first ``batch_sentences`` sentences, and exists when training stops before any
    validation (one update, a validation every 2)."""
    torch.manual_seed(8)
    network = small()
    untrained = copy.deepcopy(network)
    probe = _FirstStepProbe()
    _fit(network, tmp_path, max_steps=1, sanity_steps=sanity_steps, probes=[probe])
    assert probe.seen is not None and [r["when"] for r in probe.seen] == ["init"]
    (init,) = [r for r in _records(tmp_path) if r["when"] == "init"]
    assert init["step"] == 0
    n = callback_settings("diagnostics")["batch_sentences"]
    val = make_batch(seed=10)  # _DataModule's one validation batch
    fixed = Batch(src=val.src[:n], src_mask=val.src_mask[:n], tgt_in=val.tgt_in[:n],
                  tgt_out=val.tgt_out[:n], index=val.index[:n])  # fmt: skip
    expected = attention_entropy(untrained, fixed)
    for kind, layers in expected.items():
        for recorded, heads in zip(init["entropy"][kind], layers):
            assert recorded == pytest.approx(heads, rel=1e-6, abs=1e-7), kind
    # the trained network's entropy is not what was recorded: the check above can fail
    moved = attention_entropy(network, fixed)["decoder.cross_attn"][0]
    assert moved != pytest.approx(expected["decoder.cross_attn"][0], rel=1e-6, abs=1e-7)


def test_callback_is_a_no_op_without_blocks(tmp_path) -> None:
    torch.manual_seed(7)
    trainer = _fit(_NoBlocks(), tmp_path)
    assert not (tmp_path / "diagnostics").exists()
    assert not any(key.startswith("diag/") for key in trainer.callback_metrics)
