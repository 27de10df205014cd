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
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "cuda": torch.cuda.is_available(),
    }
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
        info["gpu_count"] = torch.cuda.device_count()
    return info


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
