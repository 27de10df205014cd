"""The numeric precision a run trains in, when the config leaves the choice to the machine.

``trainer.precision=auto`` resolves, once per run, to bf16-mixed where bf16 keeps quality and
is faster on this device, and to full precision everywhere else:

- a CUDA GPU with bf16 (Ampere and later): ``bf16-mixed``;
- a CPU with native bf16 dot products (AMX-BF16 tiles, or AVX512-BF16) on which bf16 is
  measured faster: ``bf16-mixed``. The flags alone do not decide: on some CPUs with these
  instructions bf16 trains faster than fp32, on others slower. So :func:`bf16_speedup` times a
  training-shaped matmul (forward and backward) both ways, alternating, in the run's threads
  (about a second), and bf16-mixed is chosen only when it is at least ``MIN_SPEEDUP`` faster;
- any other CPU: ``32-true``.

The speed figures of both kinds of CPU and the quality check (test BLEU at a fixed number of
updates, three seeds each side, no significant difference) are in
experiments/benchmarks/RESULTS.md ("Training precision"). ``auto`` is the default of the
``full`` scale (a GPU: decided by its capability) and of the CPU recipe. The comparisons on a
CPU (``synthetic``, ``multi30k``) keep ``32-true``: a grid's runs must share numerics across
sessions and machines, and the probe, timed while another job trains beside it, can choose
differently for identical jobs (RESULTS.md: "The precision probe beside another job").
Any explicit Lightning precision (``32-true``, ``bf16-mixed``, ``16-mixed``...) is kept as
given. The choice and its reason are logged in one line and recorded in results.json.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import torch

from seq2seq_lab.record.environment import BF16_FEATURES, cpu_features

AUTO = "auto"
MIN_SPEEDUP = 1.1  # below this the bf16 path is not worth its rounding
# the probe: one Transformer-sized linear layer, forward and backward, per round
PROBE_SHAPE = (2048, 256, 1024)  # tokens x d_model x d_ff
PROBE_ROUNDS = 5


class PrecisionChoice(NamedTuple):
    precision: str  # what the Trainer gets
    reason: str  # one line, for the log and results.json


def choose_precision(requested: str, accelerator: str) -> PrecisionChoice:
    """Resolve ``trainer.precision`` for ``trainer.accelerator`` (auto | cpu | gpu | cuda)."""
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
    speedup = bf16_speedup()
    measured = f"bf16 matmuls measured {speedup:.2f}x fp32's speed on this CPU ({names[0]})"
    if speedup >= MIN_SPEEDUP:
        return PrecisionChoice("bf16-mixed", f"auto: {measured}")
    return PrecisionChoice("32-true", f"auto: {measured}, below {MIN_SPEEDUP:g}x")


def bf16_speedup() -> float:
    """fp32 time / bf16-autocast time of x @ W forward and backward (x: tokens x d_model,
    W: d_model x d_ff), the median of ``PROBE_ROUNDS`` alternating rounds after one warm-up
    each, in the threads torch uses now."""
    tokens, d_in, d_out = PROBE_SHAPE
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(tokens, d_in, generator=generator)
    weight = torch.randn(d_in, d_out, generator=generator, requires_grad=True)

    def seconds(bf16: bool) -> float:
        started = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            y = x @ weight
        y.float().sum().backward()
        weight.grad = None
        return time.perf_counter() - started

    seconds(False), seconds(True)  # warm-up: oneDNN builds its kernels on first use
    fp32, bf16 = [], []
    for _ in range(PROBE_ROUNDS):
        fp32.append(seconds(False))
        bf16.append(seconds(True))
    return sorted(fp32)[len(fp32) // 2] / sorted(bf16)[len(bf16) // 2]


def _cuda() -> bool:
    return torch.cuda.is_available()
