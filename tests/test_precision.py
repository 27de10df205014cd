"""trainer.precision=auto: the path chosen per device, explicit settings kept, one reason given;
on a CPU with native bf16 the faster of the run's own training steps, timed without changing
the run."""

from __future__ import annotations

import csv
import math
import os
import random
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import compose_config, tiny_overrides

from seq2seq_lab.pipeline.building import build_datamodule, build_module
from seq2seq_lab.pipeline.training import train
from seq2seq_lab.record import environment
from seq2seq_lab.training import precision
from seq2seq_lab.training.precision import StepTimes, choose_precision, time_training_steps

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny networks: see conftest

NO_BF16 = {"amx_bf16": False, "avx512_bf16": False}
RUN = ("the run's module", "the run's datamodule")  # what the stub timing must be handed


@pytest.fixture
def cpu(monkeypatch):
    """Pretend to be a CPU with the given capabilities, no GPU; the trial's timing is a stub
    that returns ``times`` (None: it fails if called). Returns the list of its calls."""
    calls: list[tuple] = []

    def have(times: StepTimes | None = None, **flags: bool) -> list[tuple]:
        monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: {**NO_BF16, **flags})
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)

        def timed(module, datamodule, steps=precision.TRIAL_STEPS):
            calls.append((module, datamodule))
            assert times is not None, "this path must not time anything"
            return times

        monkeypatch.setattr(precision, "time_training_steps", timed)
        return calls

    return have


@pytest.fixture(autouse=True)
def _keep_torch_threads():
    threads = torch.get_num_threads()  # train() sets the run's threads
    yield
    torch.set_num_threads(threads)


# ----------------------------------------------------------------- the rule, timing stubbed
@pytest.mark.parametrize("given", ["32-true", "bf16-mixed", "16-mixed", "64-true"])
def test_an_explicit_precision_is_kept_untimed(given, cpu):
    calls = cpu(amx_bf16=True)
    choice = choose_precision(given, "cpu", *RUN)
    assert choice.precision == given and calls == []
    assert choice.fp32_ms_per_step is None and choice.trial_steps is None


@pytest.mark.parametrize("accelerator", ["cpu", "auto"])
def test_auto_on_a_cpu_without_native_bf16_keeps_fp32_untimed(accelerator, cpu):
    calls = cpu(avx512_f=True, avx2=True)
    choice = choose_precision("auto", accelerator, *RUN)
    assert choice == ("32-true", "auto: the CPU has no native bf16", None, None, None)
    assert calls == []


@pytest.mark.parametrize("bf16,expected", [(True, "bf16-mixed"), (False, "32-true")])
def test_auto_on_a_gpu_uses_bf16_where_the_gpu_has_it(bf16, expected, cpu, monkeypatch):
    calls = cpu(amx_bf16=not bf16)  # the CPU's flags must not decide for a GPU run
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: bf16)
    assert choose_precision("auto", "gpu", *RUN).precision == expected
    assert choose_precision("auto", "auto", *RUN).precision == expected
    assert calls == []


@pytest.mark.parametrize(
    "given,cuda,tf32_after",
    [
        ("32-true", True, False),  # fp32 on a GPU: cuDNN's TF32 off
        ("32", True, False),
        ("bf16-mixed", True, True),  # autocast rounds further anyway: left as torch has it
        ("32-true", False, True),  # no CUDA: nothing to set
    ],
)
def test_full_precision_turns_off_cudnn_tf32_on_a_gpu(given, cuda, tf32_after, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", True)  # torch's default; restored
    precision.use_full_precision_kernels(given)
    assert torch.backends.cudnn.allow_tf32 is tf32_after


@pytest.mark.parametrize("flag", ["amx_bf16", "avx512_bf16"])
@pytest.mark.parametrize(
    "fp32_ms,bf16_ms,expected",
    [
        (300.0, 200.0, "bf16-mixed"),  # bf16 faster by more than MIN_SPEEDUP
        (200.0, 300.0, "32-true"),  # fp32 faster
        (300.0, 290.0, "32-true"),  # bf16 faster, but not by MIN_SPEEDUP: a near tie
    ],
)
def test_auto_on_a_bf16_cpu_keeps_the_faster_of_the_runs_steps(
    flag, fp32_ms, bf16_ms, expected, cpu
):
    """The flags alone do not decide: the run's own steps, timed both ways, do."""
    calls = cpu(StepTimes(fp32_ms, bf16_ms, 5), **{flag: True})
    choice = choose_precision("auto", "cpu", *RUN)
    assert calls == [RUN]  # timed once, on the run's own module and batches
    assert choice.precision == expected
    reason = choice.reason
    assert reason.startswith("auto: ") and "\n" not in reason
    for figure in (f"{fp32_ms:.1f} ms", f"{bf16_ms:.1f} ms", f"{fp32_ms / bf16_ms:.2f}x"):
        assert figure in reason
    assert "5 training steps" in reason
    assert ("below" in reason) == (expected == "32-true")
    recorded = choice._asdict()  # what results.json gets
    assert recorded["fp32_ms_per_step"] == fp32_ms and recorded["bf16_ms_per_step"] == bf16_ms
    assert recorded["trial_steps"] == 5


def test_auto_on_a_bf16_cpu_needs_the_run_to_time(cpu):
    calls = cpu(StepTimes(300.0, 200.0, 5), amx_bf16=True)
    with pytest.raises(ValueError, match="module and datamodule"):
        choose_precision("auto", "cpu")
    assert calls == []


# ----------------------------------------------------------------- the trial, really timed
@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, cache_dir):
    """The module and the set-up datamodule of a smoke Transformer run (a Transformer: oneDNN
    has no bf16 LSTM kernel on a CPU without native bf16, and this one may lack it)."""
    cfg = compose_config(
        "train", tiny_overrides("transformer"), tmp_path_factory.mktemp("tiny"), cache_dir
    )
    datamodule = build_datamodule(cfg.data)
    datamodule.prepare_data()
    datamodule.setup("fit")
    return build_module(cfg, datamodule), datamodule


def _generators() -> tuple:
    numpy_state = np.random.get_state()
    return (
        torch.get_rng_state().tolist(),
        random.getstate(),
        numpy_state[1].tolist(),
        numpy_state[2],
    )


def test_the_trial_times_real_steps_and_leaves_the_run_as_it_was(tiny_run):
    module, datamodule = tiny_run
    weights = {k: v.clone() for k, v in module.state_dict().items()}
    reference = [b.tgt_out for b in datamodule.train_dataloader()]
    served = iter(datamodule.train_dataloader())  # the real loader, two batches in
    seen = [next(served).tgt_out for _ in range(2)]
    before = _generators()

    times = time_training_steps(module, datamodule, steps=2)

    assert times.steps == 2
    # two real timings on this CPU, whatever it is (without native bf16, autocast emulates
    # it): no range is asserted (speeds live in the benchmarks)
    assert 0 < times.fp32_ms < math.inf and 0 < times.bf16_ms < math.inf
    assert _generators() == before  # dropout in the copies drew nothing from the run's stream
    assert module.state_dict().keys() == weights.keys()
    assert all(torch.equal(v, weights[k]) for k, v in module.state_dict().items())
    assert all(p.grad is None for p in module.parameters())
    rest = [b.tgt_out for b in served]  # the real loader goes on where it was
    assert len(seen + rest) == len(reference)
    assert all(torch.equal(a, b) for a, b in zip(seen + rest, reference))


def test_auto_times_this_cpu_and_picks_one_of_the_two(tiny_run, monkeypatch):
    # the flags are pretended (this CPU may lack them); the timing is not
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: {"avx512_bf16": True})
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    choice = choose_precision("auto", "cpu", *tiny_run)
    assert choice.precision in ("32-true", "bf16-mixed")
    assert choice.fp32_ms_per_step > 0 and choice.bf16_ms_per_step > 0
    assert choice.trial_steps == precision.TRIAL_STEPS
    assert f"{choice.fp32_ms_per_step:.1f} ms" in choice.reason
    assert f"{choice.bf16_ms_per_step:.1f} ms" in choice.reason


def _losses(run_dir: Path) -> list[float]:
    with open(run_dir / "csv" / "metrics.csv", encoding="utf-8") as f:
        return [float(r["train/loss"]) for r in csv.DictReader(f) if r.get("train/loss")]


def _weights(run_dir: Path) -> dict[str, torch.Tensor]:
    return torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]


@pytest.mark.slow
def test_a_run_the_trial_resolves_to_fp32_trains_as_a_32_true_run(tmp_path, cache_dir, monkeypatch):
    """The trial really runs (pretended bf16 flags, real timing) and its choice is forced to
    fp32: every training loss and the last weights equal those of a run configured 32-true,
    dropout on, so the trial drew nothing from the run's random stream or its loader."""
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: {"amx_bf16": True})
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(precision, "MIN_SPEEDUP", math.inf)  # no speed-up is enough
    runs = {}
    for name, given in (("auto", "auto"), ("fixed", "32-true")):
        overrides = tiny_overrides("transformer", f"trainer.precision={given}", "test=false")
        runs[name] = train(compose_config("train", overrides, tmp_path / name, cache_dir))
    timed = runs["auto"]["precision"]
    assert timed["precision"] == "32-true" and timed["trial_steps"] == precision.TRIAL_STEPS
    assert timed["fp32_ms_per_step"] > 0 and timed["bf16_ms_per_step"] > 0
    assert runs["fixed"]["precision"]["trial_steps"] is None
    assert runs["auto"]["training"]["steps"] == runs["fixed"]["training"]["steps"] > 0
    assert _losses(tmp_path / "auto") == _losses(tmp_path / "fixed")
    assert len(_losses(tmp_path / "auto")) == runs["auto"]["training"]["steps"]
    auto, fixed = _weights(tmp_path / "auto"), _weights(tmp_path / "fixed")
    assert auto.keys() == fixed.keys()
    assert all(torch.equal(auto[k], fixed[k]) for k in auto)


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
