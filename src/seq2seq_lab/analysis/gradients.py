"""Per-layer gradient norms of a Transformer (Xiong et al. 2020, arXiv 2002.04745, section 3).

At initialisation, post-LN's gradient norm of the FFN weights grows toward the output layer, so
large updates hit the last layers first and a warmup is needed; under pre-LN it stays flat (and
shrinks with depth). This module measures that profile on one batch and plots it.

Works on any network with ``named_blocks()`` -> (name, block) whose blocks have
``named_sublayers()`` -> (name, module); no Lightning here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seq2seq_lab.analysis.trace import eval_mode
from seq2seq_lab.data.batch import Batch
from seq2seq_lab.data.specials import PAD_ID


def teacher_forced_loss(network: nn.Module, batch: Batch) -> Tensor:
    """Mean cross-entropy of ``batch.tgt_out`` per real target token (padding ignored)."""
    logits = network.teacher_forced(batch.src, batch.src_mask, batch.tgt_in).logits  # [B, T, V]
    return F.cross_entropy(
        logits.reshape(-1, logits.size(-1)), batch.tgt_out.reshape(-1), ignore_index=PAD_ID
    )


def sublayer_gradient_norms(network: nn.Module) -> dict[str, float]:
    """{"encoder.0.self_attn": ||grad||_2, ..., "decoder.2.ffn": ...} from the gradients the
    parameters hold now, over each sub-layer's weight matrices (biases excluded)."""
    norms: dict[str, float] = {}
    for block_name, block in network.named_blocks():
        for sublayer_name, sublayer in block.named_sublayers():
            grads = [
                p.grad.detach().float().pow(2).sum()
                for p in sublayer.parameters()
                if p.dim() > 1 and p.grad is not None
            ]
            if grads:
                norms[f"{block_name}.{sublayer_name}"] = float(torch.stack(grads).sum().sqrt())
    return norms


def gradient_norms(network: nn.Module, batch: Batch) -> dict[str, float]:
    """The sub-layer gradient-norm profile of one teacher-forced batch at the current weights
    (call it before training for the profile at initialisation).

    Runs without dropout (eval mode) so that the profile is a function of the weights alone,
    and leaves the parameters' ``.grad`` and the train/eval mode as they were.
    """
    saved = {p: p.grad for p in network.parameters()}
    try:
        for p in saved:
            p.grad = None
        with eval_mode(network), torch.enable_grad():
            teacher_forced_loss(network, batch).backward()
        return sublayer_gradient_norms(network)
    finally:
        for p, grad in saved.items():
            p.grad = grad


def plot_gradient_norms(
    profiles: Mapping[str, Mapping[str, float]], path: str | Path, title: str | None = None
) -> Path:
    """One figure, one panel per sub-layer kind (self_attn, cross_attn, ffn): the gradient norm
    of each block's weights, encoder blocks then decoder blocks, one line per profile
    (e.g. {"post-LN": ..., "pre-LN": ...}); log scale. Writes a PNG and returns its path."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    kinds = list(dict.fromkeys(k.rsplit(".", 1)[1] for p in profiles.values() for k in p))
    figure = Figure(figsize=(4.5 * len(kinds), 3.8), layout="constrained")
    axes = figure.subplots(1, len(kinds), squeeze=False)[0]
    for ax, kind in zip(axes, kinds):
        for label, profile in profiles.items():
            # "decoder.2.ffn" -> block "decoder.2", in the profile's (network) order
            blocks = [k.rsplit(".", 1)[0] for k in profile if k.endswith(f".{kind}")]
            ax.plot(
                range(len(blocks)),
                [profile[f"{b}.{kind}"] for b in blocks],
                marker="o",
                label=label,
            )
            ax.set_xticks(range(len(blocks)), blocks, rotation=60, ha="right", fontsize=7)
        ax.set_yscale("log")
        ax.set_title(f"{kind} weights")
        ax.set_ylabel("gradient norm")
        ax.legend(fontsize=8)
    if title:
        figure.suptitle(title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure)  # attaches the Agg canvas savefig draws on (no pyplot state)
    figure.savefig(path, format="png", dpi=120)
    return path
