"""Which optimiser kernel runs the update: the single fused kernel wherever it is safe.

torch's Adam/AdamW/SGD default to a per-parameter Python loop on the CPU (``foreach`` is a CUDA
default only). The fused kernel computes the same update (Kingma & Ba 2015, Algorithm 1) in one
pass over each tensor, several times faster than the loop on a CPU (the measured ratio:
experiments/benchmarks/RESULTS.md).

It is not used under a gradient scaler (``16-mixed``): a fused optimiser unscales inside
``step()``, after Lightning would clip, so clipping would act on scaled gradients. bf16 needs no
scaler, so ``bf16-mixed`` keeps the fused kernel and the base module clips the (true-scale)
gradients itself (``Seq2SeqModule.configure_gradient_clipping``), because Lightning refuses to
clip for any fused optimiser under mixed precision. So ``fused: null`` in conf/optim/* means
"fused unless a gradient scaler runs"; an explicit true/false always wins.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from hydra.utils import get_class


def supports_fused(target: str) -> bool:
    """Whether the optimiser class named by ``_target_`` takes a ``fused`` argument."""
    try:
        cls = get_class(target)
    except Exception:  # an unimportable target is reported by instantiate, with its key
        return False
    return "fused" in inspect.signature(cls.__init__).parameters


def uses_grad_scaler(precision: str | int | None) -> bool:
    """Whether Lightning runs a gradient scaler at this ``trainer.precision`` (fp16 AMP only)."""
    return str(precision) in {"16-mixed", "16"}


def choose_kernel(config: Mapping[str, Any], precision: str | int | None) -> dict[str, Any]:
    """The optimiser config with ``fused`` resolved: null -> True when the class supports it
    and no gradient scaler runs, else the key is dropped (the class's own default)."""
    resolved = dict(config)
    if resolved.get("fused", None) is not None:
        return resolved
    resolved.pop("fused", None)
    if not uses_grad_scaler(precision) and supports_fused(resolved["_target_"]):
        resolved["fused"] = True
    return resolved
