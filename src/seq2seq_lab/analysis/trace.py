"""Running a network for the diagnostics: without dropout, and with everything recorded.

The diagnostics in this package work on any network that offers ``trace(src, src_mask, tgt_in)``
(per-block states and attention weights, e.g. ``TransformerNetwork.trace``) and, for gradient
norms, ``named_blocks()``; recurrent families offer neither and are skipped by the callback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

from seq2seq_lab.data.batch import Batch


@contextmanager
def eval_mode(network: nn.Module) -> Iterator[nn.Module]:
    """Dropout off inside the block (the figures become a function of the weights alone); the
    network's train/eval mode is restored on exit."""
    was_training = network.training
    network.eval()
    try:
        yield network
    finally:
        network.train(was_training)


def has_blocks(network: nn.Module) -> bool:
    """Does the network expose the block structure the diagnostics need?"""
    return callable(getattr(network, "named_blocks", None)) and callable(
        getattr(network, "trace", None)
    )


@torch.no_grad()
def trace_batch(network: nn.Module, batch: Batch) -> Any:
    """``network.trace`` of one teacher-forced batch, without dropout or gradients."""
    with eval_mode(network):
        return network.trace(batch.src, batch.src_mask, batch.tgt_in)
