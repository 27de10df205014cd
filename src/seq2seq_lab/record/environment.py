"""What a result was produced with: package versions and hardware (recorded in results.json)."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata

import torch

PACKAGES = (
    "seq2seq-lab",
    "torch",
    "lightning",
    "hydra-core",
    "sacrebleu",
    "sentencepiece",
    "numpy",
    "wandb",
)

# The instruction sets that set a CPU's speed, as torch detects them (name, torch's flag): the
# model name does not tell them apart (two "Intel(R) Xeon(R) Processor" machines, one with AMX
# and one without, differ in speed: experiments/benchmarks/RESULTS.md).
CPU_FEATURES = (
    ("AMX-BF16", "amx_bf16"),
    ("AVX512-BF16", "avx512_bf16"),
    ("AVX512", "avx512_f"),
    ("AVX2", "avx2"),
)
BF16_FEATURES = ("AMX-BF16", "AVX512-BF16")  # native bf16 dot products


def versions() -> dict[str, str]:
    found = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def hardware() -> dict[str, object]:
    info: dict[str, object] = {
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_features": cpu_features(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "cuda": torch.cuda.is_available(),
    }
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
        info["gpu_count"] = torch.cuda.device_count()
    return info


def cpu_features() -> list[str]:
    """The names of ``CPU_FEATURES`` this CPU has, fastest first."""
    capabilities = torch.cpu.get_capabilities()
    return [name for name, flag in CPU_FEATURES if capabilities.get(flag)]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> str:
    """One line for a grid's wall-time record: CPU model (instruction sets) x cores."""
    return f"{_cpu_model()} ({', '.join(cpu_features()) or 'no AVX2'}) x {os.cpu_count()}"


if (
    __name__ == "__main__"
):  # experiments/queue.sh and run_cpu.sh: python -m seq2seq_lab.record.environment
    print(machine())
