"""The numeric precision a run trains in, when the config leaves the choice to the machine.

``trainer.precision=auto`` resolves, once per run, to the fastest path that was measured to
keep quality on this kind of device, and falls back to full precision everywhere else:

- a CUDA GPU with bf16 (Ampere and later): ``bf16-mixed``;
- a CPU with native bf16 dot products (AMX-BF16 tiles, or AVX512-BF16): ``bf16-mixed``;
- any other CPU: ``32-true``.

The speed figures behind the CPU lines and the quality check (test BLEU at a fixed number of
updates, three seeds each side, no significant difference) are in
experiments/benchmarks/RESULTS.md ("Training precision"). ``auto`` is the default of the
real-data scales (``real_cpu``, ``full``) and so of the CPU recipe; the synthetic scales keep
``32-true``, the precision their committed comparisons ran in.
Any explicit Lightning precision (``32-true``, ``bf16-mixed``, ``16-mixed``...) is kept as
given. The choice and its reason are logged in one line and recorded in results.json.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

AUTO = "auto"


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
    capabilities = torch.cpu.get_capabilities()
    if capabilities.get("amx_bf16"):
        return PrecisionChoice("bf16-mixed", "auto: the CPU has AMX-BF16 tiles")
    if capabilities.get("avx512_bf16"):
        return PrecisionChoice("bf16-mixed", "auto: the CPU has AVX512-BF16")
    return PrecisionChoice("32-true", "auto: the CPU has no native bf16")


def _cuda() -> bool:
    return torch.cuda.is_available()
