"""The optimiser kernel choice: fused unless a gradient scaler runs; clipping it under bf16."""

import lightning as L
import pytest
import torch
from config_values import module_settings

from seq2seq_lab.config import model_config
from seq2seq_lab.optim.kernels import choose_kernel
from seq2seq_lab.training.module import Seq2SeqModule

ADAM = {"_target_": "torch.optim.Adam", "lr": 1e-3, "fused": None}


def test_full_precision_gets_the_fused_kernel():
    assert choose_kernel(ADAM, "32-true")["fused"] is True
    assert choose_kernel(ADAM, None)["fused"] is True


def test_a_gradient_scaler_keeps_the_library_default():
    # the fused kernel unscales inside step(), after clipping would have seen scaled gradients
    for precision in ("16-mixed", "16"):
        assert "fused" not in choose_kernel(ADAM, precision)


def test_bf16_mixed_has_no_scaler_and_gets_the_fused_kernel():
    assert choose_kernel(ADAM, "bf16-mixed")["fused"] is True


def _module_with_gradients(precision: str, norm: float) -> tuple[Seq2SeqModule, torch.optim.Adam]:
    module = Seq2SeqModule(
        network={
            **model_config("luong", hidden_size=8, embedding_dim=4),
            "src_vocab_size": 11,
            "tgt_vocab_size": 13,
        },
        optimizer=ADAM,
        schedule={"_target_": "seq2seq_lab.optim.schedules.Constant"},
        **module_settings(),
    )
    module.trainer = L.Trainer(accelerator="cpu", precision=precision, logger=False)
    optimizer = module.configure_optimizers()["optimizer"]
    for p in module.parameters():
        p.grad = torch.ones_like(p)
    scale = norm / _total_norm(module)
    for p in module.parameters():
        p.grad.mul_(scale)
    return module, optimizer


def _total_norm(module: Seq2SeqModule) -> float:
    norms = [p.grad.norm() for p in module.parameters()]
    return torch.linalg.vector_norm(torch.stack(norms)).item()


def _largest(module: Seq2SeqModule) -> float:
    return max(p.grad.abs().max().item() for p in module.parameters())


@pytest.mark.parametrize("algorithm", ["norm", "value"])
def test_bf16_mixed_clips_the_fused_optimiser_itself(algorithm):
    module, optimizer = _module_with_gradients("bf16-mixed", norm=50.0)
    assert optimizer.defaults["fused"] is True  # Lightning itself would refuse to clip here
    assert _largest(module) > 1.0
    module.configure_gradient_clipping(optimizer, 1.0, algorithm)
    if algorithm == "norm":
        assert _total_norm(module) == pytest.approx(1.0, rel=1e-4)
    else:
        assert _largest(module) == pytest.approx(1.0)


def test_full_precision_clipping_is_lightnings():
    module, optimizer = _module_with_gradients("32-true", norm=50.0)
    assert optimizer.defaults["fused"] is True
    module.configure_gradient_clipping(optimizer, 1.0, "norm")
    assert _total_norm(module) == pytest.approx(1.0, rel=1e-4)


def test_an_explicit_choice_wins():
    assert choose_kernel({**ADAM, "fused": False}, "32-true")["fused"] is False


def test_optimisers_without_a_fused_kernel_are_left_alone():
    config = {"_target_": "torch.optim.RMSprop", "lr": 0.1, "fused": None}
    assert choose_kernel(config, "32-true") == {"_target_": "torch.optim.RMSprop", "lr": 0.1}


def test_fused_and_loop_adam_make_the_same_update():
    torch.manual_seed(0)
    weights = [torch.randn(5, 3), torch.randn(7)]
    grads = [torch.randn_like(w) for w in weights]
    results = []
    for fused in (True, False):
        params = [torch.nn.Parameter(w.clone()) for w in weights]
        for p, g in zip(params, grads):
            p.grad = g.clone()
        optimizer = torch.optim.Adam(params, lr=1e-2, fused=fused)
        for _ in range(3):
            optimizer.step()
        results.append(params)
    for a, b in zip(*results):
        torch.testing.assert_close(a, b)
