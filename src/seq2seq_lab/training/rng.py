"""The global random number generators' states, as checkpoint-safe plain containers.

Dropout draws from torch's global generator (and CUDA's, one per device); Python's ``random``
and NumPy's legacy global generator are included for any code that uses them. A resumed run
sets them back to what they were when its checkpoint was taken, so it draws the masks the
uninterrupted run drew. Everything is a tensor, a list, a number or a string, so checkpoints
still load with ``torch.load(weights_only=True)`` (NumPy's state is an array, hence a list).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch


def rng_state() -> dict[str, Any]:
    """{"torch", "cuda" (one tensor per device; empty without CUDA), "python", "numpy"}."""
    numpy_state = np.random.get_state(legacy=False)
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "python": random.getstate(),  # (version, tuple of ints, None)
        "numpy": {
            "bit_generator": numpy_state["bit_generator"],
            "key": numpy_state["state"]["key"].tolist(),
            "pos": int(numpy_state["state"]["pos"]),
            "has_gauss": int(numpy_state["has_gauss"]),
            "gauss": float(numpy_state["gauss"]),
        },
    }


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what :func:`rng_state` returned; CUDA states only where CUDA is available."""
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    random.setstate(state["python"])
    numpy_state = state["numpy"]
    np.random.set_state(
        {
            "bit_generator": numpy_state["bit_generator"],
            "state": {
                "key": np.asarray(numpy_state["key"], dtype=np.uint32),
                "pos": numpy_state["pos"],
            },
            "has_gauss": numpy_state["has_gauss"],
            "gauss": numpy_state["gauss"],
        }
    )
