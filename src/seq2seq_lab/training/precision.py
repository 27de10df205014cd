"""The numeric precision a run trains in, when the config leaves the choice to the machine.

``trainer.precision=auto`` resolves, once per run, to bf16-mixed where bf16 keeps quality and
is faster on this device, and to full precision everywhere else:

- a CUDA GPU with bf16 (Ampere and later): ``bf16-mixed``;
- a CPU with native bf16 dot products (AMX-BF16 tiles, or AVX512-BF16): the faster of the two,
  measured on the run itself. The flags alone do not decide, and neither does a matmul: on
  some CPUs with these instructions bf16 trains faster than fp32, on others slower, and a
  matmul timed alone has predicted the wrong side. So :func:`time_training_steps` times
  ``TRIAL_STEPS`` real training steps of the run's own network on the run's own first
  training batches, in each precision (one warm-up step each, then the two alternating on the
  same batches), and the choice is::

      speedup = t_fp32 / t_bf16      (t: mean wall-clock seconds per step over those batches)
      bf16-mixed if speedup >= MIN_SPEEDUP, else 32-true

  A step is what the Trainer runs: ``loss_terms(batch)`` under ``torch.autocast("cpu",
  torch.bfloat16)`` for bf16-mixed (the loss in float32, as the module computes it), divided
  by the target tokens, backward, a step of the run's optimiser (its kernel chosen for that
  precision). The trial leaves the run as it was: it trains deep copies of the module, each
  with its own throwaway optimiser, on batches of a fresh training loader (which draws from
  its own ``(seed, epoch)`` generator, not the real loader's place), and every global random
  generator is set back afterwards, so a run resolved to ``32-true`` trains exactly as one
  configured ``32-true``;
- any other CPU: ``32-true``, without timing.

The speed figures of both kinds of CPU and the quality check (test BLEU at a fixed number of
updates, three seeds each side, no significant difference) are in
experiments/benchmarks/RESULTS.md ("Training precision"). ``auto`` is the default of the
``full`` scale (a GPU: decided by its capability) and of the CPU recipe. The comparisons on a
CPU (``synthetic``, ``multi30k``) keep ``32-true``: a grid's runs must share numerics across
sessions and machines, and a timing taken while another job trains beside it can choose
differently for identical jobs (RESULTS.md: "The precision probe beside another job").
Any explicit Lightning precision (``32-true``, ``bf16-mixed``, ``16-mixed``...) is kept as
given. The choice and its reason (both step times, their ratio, the steps timed) are logged in
one line and recorded in results.json (``PrecisionChoice._asdict()``).

``32-true`` means float32 arithmetic on a GPU too (:func:`use_full_precision_kernels`): torch
lets cuDNN's recurrent and convolution kernels round their inputs to TF32 (a 10-bit mantissa)
unless told not to, and those kernels are chosen by batch size, so a recurrent model's scores
would depend on the batch a sentence is decoded in (experiments/benchmarks/RESULTS.md, the GPU
section). Plain matmuls are already float32 by torch's default.
"""

from __future__ import annotations

import copy
import itertools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import torch

from seq2seq_lab.config import instantiate
from seq2seq_lab.optim.kernels import choose_kernel
from seq2seq_lab.record.environment import BF16_FEATURES, cpu_features
from seq2seq_lab.training.rng import rng_state, set_rng_state

if TYPE_CHECKING:
    from seq2seq_lab.data.batch import Batch
    from seq2seq_lab.data.datamodule import TranslationDataModule
    from seq2seq_lab.training.module import Seq2SeqModule

AUTO = "auto"
# bf16-mixed rounds every matmul input to an 8-bit mantissa, so its runs no longer share the
# fp32 numerics the comparisons are made in; a few steps timed on a shared machine cannot
# resolve a gain of a few per cent either. So bf16 must be clearly faster to be chosen, and a
# near tie keeps full precision.
MIN_SPEEDUP = 1.1
# Steps timed per precision, after one warm-up step each (oneDNN builds its kernels on first
# use): each costs one step of the run in each precision, and start-up should stay seconds.
TRIAL_STEPS = 5
# Lightning's names of float32 (and float64) training, its short forms included
FULL_PRECISION = ("32-true", "32", "64-true", "64")


class PrecisionChoice(NamedTuple):
    precision: str  # what the Trainer gets
    reason: str  # one line, for the log and results.json
    # measured by the trial on a CPU with native bf16 (None where nothing was timed)
    fp32_ms_per_step: float | None = None
    bf16_ms_per_step: float | None = None
    trial_steps: int | None = None  # timed per precision


class StepTimes(NamedTuple):
    fp32_ms: float  # mean wall-clock milliseconds per training step
    bf16_ms: float
    steps: int  # timed per precision, on the same batches


def choose_precision(
    requested: str,
    accelerator: str,
    module: Seq2SeqModule | None = None,
    datamodule: TranslationDataModule | None = None,
) -> PrecisionChoice:
    """Resolve ``trainer.precision`` for ``trainer.accelerator`` (auto | cpu | gpu | cuda).

    ``module`` and ``datamodule`` (set up for ``fit``) are the run's; only ``auto`` on a CPU
    with native bf16 uses them (the trial of the module docstring), and there they are
    required."""
    requested = str(requested)
    if requested != AUTO:
        return PrecisionChoice(requested, f"trainer.precision={requested} as configured")
    on_gpu = accelerator in ("gpu", "cuda") or (accelerator == "auto" and _cuda())
    if on_gpu:
        if torch.cuda.is_bf16_supported():
            return PrecisionChoice("bf16-mixed", "auto: the GPU computes bf16 natively")
        return PrecisionChoice("32-true", "auto: this GPU has no native bf16")
    names = [name for name in cpu_features() if name in BF16_FEATURES]
    if not names:
        return PrecisionChoice("32-true", "auto: the CPU has no native bf16")
    if module is None or datamodule is None:
        raise ValueError(
            "trainer.precision=auto on a CPU with native bf16 times the run's own training "
            "step: choose_precision needs the run's module and datamodule"
        )
    times = time_training_steps(module, datamodule)
    speedup = times.fp32_ms / times.bf16_ms
    measured = (
        f"{times.steps} training steps of this run took {times.fp32_ms:.1f} ms each in fp32, "
        f"{times.bf16_ms:.1f} ms in bf16-mixed: bf16 {speedup:.2f}x fp32's speed on this CPU "
        f"({names[0]})"
    )
    figures = {
        "fp32_ms_per_step": times.fp32_ms,
        "bf16_ms_per_step": times.bf16_ms,
        "trial_steps": times.steps,
    }
    if speedup >= MIN_SPEEDUP:
        return PrecisionChoice("bf16-mixed", f"auto: {measured}", **figures)
    return PrecisionChoice("32-true", f"auto: {measured}, below {MIN_SPEEDUP:g}x", **figures)


def use_full_precision_kernels(precision: str) -> None:
    """Under ``32-true`` turn off cuDNN's TF32 for this process (a no-op without CUDA, and
    under any mixed precision, whose autocast rounds further anyway)."""
    if str(precision) in FULL_PRECISION and _cuda():
        torch.backends.cudnn.allow_tf32 = False


def time_training_steps(
    module: Seq2SeqModule, datamodule: TranslationDataModule, steps: int = TRIAL_STEPS
) -> StepTimes:
    """Mean milliseconds per real training step of ``module`` in fp32 and in bf16-mixed, on
    the CPU, in the threads torch uses now, over the same first ``steps`` training batches
    (after one warm-up step each on the batch before them), the two precisions alternating
    which goes first. Callable on any CPU (without native bf16, autocast emulates it).

    Leaves ``module``, the training loader's place and every global random generator as it
    found them (see the module docstring)."""
    if steps < 1:
        raise ValueError(f"steps={steps}: expected 1 or more")
    saved = rng_state()  # dropout in the copies draws from the global generators
    try:
        batches = _trial_batches(datamodule, steps + 1)
        trials = {bf16: _trial_step(module, bf16) for bf16 in (False, True)}
        for step in trials.values():
            step(batches[0])
        seconds = {False: 0.0, True: 0.0}
        for i, batch in enumerate(batches[1:]):
            # alternate which precision runs first, so that neither always finds the batch
            # and the caches as the other left them
            for bf16 in (False, True) if i % 2 == 0 else (True, False):
                started = time.perf_counter()
                trials[bf16](batch)
                seconds[bf16] += time.perf_counter() - started
    finally:
        set_rng_state(saved)
    return StepTimes(1000 * seconds[False] / steps, 1000 * seconds[True] / steps, steps)


def _trial_batches(datamodule: TranslationDataModule, n: int) -> list[Batch]:
    """The first ``n`` batches of a fresh training loader (served again from the start where
    the epoch has fewer). A new loader has its own sampler and generator, seeded by
    ``(data.seed, epoch)``: the loader the Trainer builds later is not moved."""
    loader = datamodule.train_dataloader()
    drawn = list(itertools.islice(loader, n))
    if not drawn:
        raise ValueError("the training split has no batch to time trainer.precision=auto on")
    return list(itertools.islice(itertools.cycle(drawn), n))


def _trial_step(module: Seq2SeqModule, bf16: bool) -> Callable[[Batch], None]:
    """One training step of a deep copy of ``module`` with a throwaway optimiser of the run's
    kind, as the Trainer runs it at ``bf16-mixed`` (``bf16``) or ``32-true``. (Gradient
    clipping and the learning-rate schedule are left out: they cost the same in both.)"""
    precision = "bf16-mixed" if bf16 else "32-true"
    twin = copy.deepcopy(module).train()
    optimizer = instantiate(
        choose_kernel(twin.hparams.optimizer, precision), key="optim", params=twin.parameters()
    )

    def step(batch: Batch) -> None:
        # Lightning's bf16-mixed autocasts the training step (forward and loss), not backward
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss_sum, _, n_tokens = twin.loss_terms(batch)
            loss = loss_sum / n_tokens
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def _cuda() -> bool:
    return torch.cuda.is_available()
