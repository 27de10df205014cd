"""trainer.precision=auto: the path chosen per device, explicit settings kept, one reason given."""

from __future__ import annotations

import pytest
import torch

from seq2seq_lab.training.precision import choose_precision

NO_BF16 = {"amx_bf16": False, "avx512_bf16": False}


@pytest.fixture
def cpu(monkeypatch):
    """Pretend to be a CPU with the given capabilities, and no GPU."""

    def have(**flags: bool) -> None:
        monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: {**NO_BF16, **flags})
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)

    return have


@pytest.mark.parametrize("given", ["32-true", "bf16-mixed", "16-mixed", "64-true"])
def test_an_explicit_precision_is_kept(given, cpu):
    cpu(amx_bf16=True)
    assert choose_precision(given, "cpu").precision == given


@pytest.mark.parametrize(
    "flags,expected",
    [
        ({"amx_bf16": True, "avx512_bf16": True}, "bf16-mixed"),
        ({"avx512_bf16": True}, "bf16-mixed"),
        ({}, "32-true"),
    ],
)
def test_auto_on_a_cpu_follows_its_bf16_hardware(flags, expected, cpu):
    cpu(**flags)
    for accelerator in ("cpu", "auto"):
        choice = choose_precision("auto", accelerator)
        assert choice.precision == expected
        assert choice.reason.startswith("auto: ") and "\n" not in choice.reason


@pytest.mark.parametrize("bf16,expected", [(True, "bf16-mixed"), (False, "32-true")])
def test_auto_on_a_gpu_uses_bf16_where_the_gpu_has_it(bf16, expected, cpu, monkeypatch):
    cpu(amx_bf16=not bf16)  # the CPU's flags must not decide for a GPU run
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: bf16)
    assert choose_precision("auto", "gpu").precision == expected
    assert choose_precision("auto", "auto").precision == expected
