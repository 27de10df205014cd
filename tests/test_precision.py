"""trainer.precision=auto: the path chosen per device, explicit settings kept, one reason given."""

from __future__ import annotations

import math
import os

import pytest
import torch

from seq2seq_lab.record import environment
from seq2seq_lab.training import precision
from seq2seq_lab.training.precision import choose_precision

NO_BF16 = {"amx_bf16": False, "avx512_bf16": False}


@pytest.fixture
def cpu(monkeypatch):
    """Pretend to be a CPU with the given capabilities (and measured bf16 speed-up), no GPU."""

    def have(speedup: float = 1.4, **flags: bool) -> None:
        monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: {**NO_BF16, **flags})
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        monkeypatch.setattr(precision, "bf16_speedup", lambda: speedup)

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


@pytest.mark.parametrize("speedup,expected", [(1.39, "bf16-mixed"), (0.62, "32-true")])
def test_auto_on_a_bf16_cpu_follows_the_measured_speed(speedup, expected, cpu):
    """The flags alone do not decide: a Xeon with AVX512-BF16 ran bf16 at 0.6x fp32's speed."""
    cpu(speedup=speedup, avx512_bf16=True)
    choice = choose_precision("auto", "cpu")
    assert choice.precision == expected
    assert f"{speedup:.2f}x" in choice.reason and "\n" not in choice.reason


def test_the_probe_times_both_paths_on_this_cpu():
    speedup = precision.bf16_speedup()
    # a ratio of two real timings, whatever this CPU is: an AVX2-only CPU emulates bf16 and
    # measured 0.036, so no range is asserted (speed lives in the benchmarks)
    assert math.isfinite(speedup) and speedup > 0


def test_results_record_the_instruction_sets_torch_finds(cpu):
    """hardware() (results.json) and the wall-time line name them, fastest first."""
    cpu(amx_bf16=True, avx512_bf16=True, avx512_f=True, avx2=True)
    assert environment.cpu_features() == ["AMX-BF16", "AVX512-BF16", "AVX512", "AVX2"]
    assert environment.hardware()["cpu_features"] == environment.cpu_features()
    assert environment.machine().endswith(
        " (AMX-BF16, AVX512-BF16, AVX512, AVX2) x " + str(os.cpu_count())
    )
    cpu(avx2=True)
    assert environment.cpu_features() == ["AVX2"]
    cpu()
    assert environment.machine().endswith(" (no AVX2) x " + str(os.cpu_count()))
