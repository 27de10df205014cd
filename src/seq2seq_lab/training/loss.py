"""The training loss: label-smoothed cross entropy and the plain NLL, from one log-softmax.

For a target token y* with model distribution p and smoothing epsilon over V classes
(Szegedy et al. 2016), the smoothed target is q(y) = (1 - epsilon) [y = y*] + epsilon / V, so

    loss = -sum_y q(y) log p(y) = (1 - epsilon) * nll + epsilon * smooth,
    nll = -log p(y*),    smooth = -(1/V) sum_y log p(y),

summed over the non-padding positions. These are the operations, in the order, of
``F.cross_entropy(..., label_smoothing=epsilon, reduction="sum")`` (ATen's
``cross_entropy_loss_label_smoothing``), so loss and gradients are bit-identical to it; the
difference is that the NLL, which perplexity needs, is read off the same log-softmax instead
of a second pass over the [N, V] logits (a second log-softmax over 4,096 x 8,000 logits is a
few per cent of a Multi30k Transformer step: experiments/benchmarks/RESULTS.md).
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor


def smoothed_cross_entropy(
    logits: Tensor, gold: Tensor, *, epsilon: float, ignore_index: int
) -> tuple[Tensor, Tensor]:
    """(smoothed loss sum, NLL sum) of ``logits`` [N, V] against ``gold`` [N]; positions
    whose gold is ``ignore_index`` count in neither. The NLL sum is detached."""
    log_probs = F.log_softmax(logits, dim=-1)
    nll = F.nll_loss(log_probs, gold, ignore_index=ignore_index, reduction="sum")
    if epsilon == 0.0:
        return nll, nll.detach()
    smooth = (-log_probs.sum(dim=-1)).masked_fill(gold == ignore_index, 0.0).sum()
    loss = (1.0 - epsilon) * nll + smooth * (epsilon / logits.size(-1))
    return loss, nll.detach()
