"""Batched greedy decoding, shared by every model family through the network contract.

Shapes: B batch, S source length, V target vocabulary.
"""

from __future__ import annotations

import torch
from torch import Tensor

from seq2seq_lab.decoding.hypotheses import Hypotheses, max_output_lengths
from seq2seq_lab.models.network import Seq2SeqNetwork


@torch.no_grad()
def greedy_search(
    network: Seq2SeqNetwork,
    src: Tensor,
    src_mask: Tensor,
    *,
    max_len_a: float,
    max_len_b: int,
    min_len: int,
    return_attention: bool = False,
) -> Hypotheses:
    """y_t = argmax_y log P(y | y_<t, x) until EOS or the length limit a*|x| + b; EOS is
    forbidden until min_len tokens have been emitted. The score is sum_t log P(y_t | y_<t, x),
    EOS included.

    A NaN log-probability (NaN or +inf logits: a diverged network) counts as -inf. A sentence
    with no finite continuation at some step (every token -inf) ends there with the empty
    hypothesis scored -inf, as beam search returns for a sentence without a finite hypothesis:
    every sentence gets an output, whatever the network emits.

    Settings are required keywords: their defaults live in :class:`DecodingSettings` only.

    Finished rows stay in the batch (their steps are computed and discarded) so that the
    decoder state never has to be re-indexed; the loop ends when every row has finished.
    """
    batch_size = src.size(0)
    limits = max_output_lengths(src_mask, max_len_a, max_len_b)  # [B]
    max_steps = int(limits.max())  # the most steps taken: the decoder state is sized for them
    state = network.init_state(network.encode(src, src_mask), max_length=max_steps)
    prev = torch.full((batch_size,), network.bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(batch_size, dtype=torch.bool, device=src.device)
    failed = torch.zeros(batch_size, dtype=torch.bool, device=src.device)  # no finite token
    lengths = torch.zeros(batch_size, dtype=torch.long, device=src.device)  # incl. EOS
    scores = torch.zeros(batch_size, device=src.device)
    steps, attentions = [], []
    for t in range(max_steps):
        out = network.step(prev, state)
        state = out.state
        log_probs = torch.log_softmax(out.logits.float(), dim=-1)  # [B, V]
        log_probs = log_probs.masked_fill(log_probs.isnan(), float("-inf"))
        if t < min_len:
            log_probs[:, network.eos_id] = float("-inf")
        token = log_probs.argmax(dim=-1)
        chosen = log_probs.gather(1, token.unsqueeze(1)).squeeze(1)  # [B]
        failed |= ~finished & ~torch.isfinite(chosen)
        stopped = finished | failed
        token = token.masked_fill(stopped, network.pad_id)
        scores += chosen.masked_fill(stopped, 0.0)
        lengths += (~stopped).long()
        steps.append(token)
        if return_attention and out.attention is not None:
            attentions.append(out.attention)
        finished = stopped | (token == network.eos_id) | (t + 1 >= limits)
        if bool(finished.all()):
            break
        prev = token
    scores = scores.masked_fill(failed, float("-inf"))
    lengths = lengths.masked_fill(failed, 0)  # the empty hypothesis
    generated = torch.stack(steps, dim=1).tolist()  # one device->host copy for the batch
    lengths_list = lengths.tolist()
    tokens = [_strip_eos(row[:n], network.eos_id) for row, n in zip(generated, lengths_list)]
    attention = None
    if attentions:
        stacked = torch.stack(attentions, dim=1)  # [B, steps, S]
        src_lengths = src_mask.sum(dim=1).tolist()
        attention = [
            stacked[b, : lengths_list[b], : src_lengths[b]].cpu() for b in range(batch_size)
        ]
    return Hypotheses(tokens=tokens, scores=scores.tolist(), attention=attention)


def _strip_eos(row: list[int], eos_id: int) -> list[int]:
    return row[:-1] if row and row[-1] == eos_id else row
