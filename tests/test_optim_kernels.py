"""The optimiser kernel choice: fused in full precision, never under mixed precision."""

import torch

from seq2seq_lab.optim.kernels import choose_kernel

ADAM = {"_target_": "torch.optim.Adam", "lr": 1e-3, "fused": None}


def test_full_precision_gets_the_fused_kernel():
    assert choose_kernel(ADAM, "32-true")["fused"] is True
    assert choose_kernel(ADAM, None)["fused"] is True


def test_mixed_precision_keeps_the_library_default():
    # Lightning refuses gradient clipping with an optimiser that unscales inside step()
    for precision in ("bf16-mixed", "16-mixed"):
        assert "fused" not in choose_kernel(ADAM, precision)


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
