"""Batched greedy decoding, shared by every model family through the network contract.

Shapes: B batch, S source length, V target vocabulary, t the current step.
"""

from __future__ import annotations

import torch
from torch import Tensor

from seq2seq_lab.decoding.hypotheses import Hypotheses, max_output_lengths
from seq2seq_lab.models.network import Seq2SeqNetwork

# A finished row stays in the batch (its steps computed and discarded) until at least this
# share of the batch has finished; then the finished rows are dropped (``BatchState.select``,
# one copy of the decoder state). Dropping at every finish would copy the state almost every
# step; never dropping computes every row until the longest output ends.
COMPACT_SHARE = 0.125


def finished_rows_to_drop(finished: Tensor) -> Tensor | None:
    """The rows to keep when enough rows have finished to be worth a copy of the state (see
    ``COMPACT_SHARE``), else None; ``finished`` [R] is True on rows whose search has ended."""
    n_finished = int(finished.sum())
    if n_finished == 0 or n_finished < COMPACT_SHARE * finished.numel():
        return None
    return (~finished).nonzero().squeeze(1)


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

    The decoder state holds only the rows still searching, up to a few finished ones: once
    ``COMPACT_SHARE`` of the rows have finished they are dropped from the state, so the cost of
    a batch follows its outputs' lengths rather than its longest output times its size.
    """
    batch_size, device = src.size(0), src.device
    limits = max_output_lengths(src_mask, max_len_a, max_len_b)  # [B]
    max_steps = int(limits.max())  # the most steps taken: the decoder state is sized for them
    state = network.init_state(network.encode(src, src_mask), max_length=max_steps)
    # Per sentence, in batch order; ``live`` maps the state's rows to sentences.
    tokens = torch.full((batch_size, max_steps), network.pad_id, dtype=torch.long, device=device)
    lengths = torch.zeros(batch_size, dtype=torch.long, device=device)  # incl. EOS
    scores = torch.zeros(batch_size, device=device)
    failed = torch.zeros(batch_size, dtype=torch.bool, device=device)  # no finite token
    attention: Tensor | None = None  # [B, max_steps, S]
    live = torch.arange(batch_size, device=device)
    live_limits = limits
    finished = torch.zeros(batch_size, dtype=torch.bool, device=device)  # per state row
    prev = torch.full((batch_size,), network.bos_id, dtype=torch.long, device=device)
    for t in range(max_steps):
        out = network.step(prev, state)
        log_probs = torch.log_softmax(out.logits.float(), dim=-1)  # [R, V]
        log_probs = log_probs.masked_fill(log_probs.isnan(), float("-inf"))
        if t < min_len:
            log_probs[:, network.eos_id] = float("-inf")
        token = log_probs.argmax(dim=-1)
        chosen = log_probs.gather(1, token.unsqueeze(1)).squeeze(1)  # [R]
        failing = ~finished & ~torch.isfinite(chosen)
        failed[live[failing]] = True
        stopped = finished | failing
        token = token.masked_fill(stopped, network.pad_id)
        searching = live[~stopped]
        tokens[searching, t] = token[~stopped]
        scores[searching] += chosen[~stopped]
        lengths[searching] += 1
        if return_attention and out.attention is not None:
            if attention is None:
                attention = out.attention.new_zeros(batch_size, max_steps, src.size(1))
            attention[searching, t] = out.attention[~stopped]
        finished = stopped | (token == network.eos_id) | (t + 1 >= live_limits)
        if bool(finished.all()):
            break
        keep = finished_rows_to_drop(finished)
        if keep is None:
            state, prev = out.state, token
        else:
            state, prev = out.state.select(keep), token.index_select(0, keep)
            live, live_limits = live.index_select(0, keep), live_limits.index_select(0, keep)
            finished = finished.index_select(0, keep)
    scores = scores.masked_fill(failed, float("-inf"))
    lengths = lengths.masked_fill(failed, 0)  # the empty hypothesis
    generated = tokens.tolist()  # one device->host copy for the batch
    lengths_list = lengths.tolist()
    hypotheses = [_strip_eos(row[:n], network.eos_id) for row, n in zip(generated, lengths_list)]
    per_sentence = None
    if attention is not None:
        src_lengths = src_mask.sum(dim=1).tolist()
        per_sentence = [
            attention[b, : lengths_list[b], : src_lengths[b]].cpu() for b in range(batch_size)
        ]
    return Hypotheses(tokens=hypotheses, scores=scores.tolist(), attention=per_sentence)


def _strip_eos(row: list[int], eos_id: int) -> list[int]:
    return row[:-1] if row and row[-1] == eos_id else row
