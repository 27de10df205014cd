"""Exact search: the output of highest log-probability, by depth-first search with a bound.

Stahlberg and Byrne 2019 ("On NMT search errors and model errors: cat got your tongue?"): a
prefix's log-probability only falls as it grows (every token adds log p <= 0), so once a
complete output scoring ``best`` is known, any prefix scoring at most ``best`` can be cut with
everything below it. Children are visited most probable first, so the first complete output
found is the greedy one and the bound tightens early; a caller's ``bound`` (the beam's output)
tightens it from the start.

The space searched is the one beam search ranks (decoding/beam.py): outputs ending in EOS
within the length limit (EOS counted), and outputs the limit cuts, scored without EOS; EOS is
forbidden while fewer than ``min_len`` tokens have been emitted. Scores are plain
log-probabilities, log P(y | x) = sum_t log p(y_t | y_<t, x) (no length penalty: the model's
own ranking, which is what a search error is measured against).

One sentence at a time, one decoder step per node expanded; ``max_nodes`` bounds the steps a
sentence may take. A search that ends within it is exact (``finished``); one that runs out
returns the best output found so far, which is only a lower bound on the global best.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from seq2seq_lab.decoding.hypotheses import max_output_lengths
from seq2seq_lab.models.network import Seq2SeqNetwork
from seq2seq_lab.models.state import BatchState


@dataclass(frozen=True)
class ExactResult:
    """The global best of one sentence: ``tokens`` (no BOS, no EOS), ``score`` its
    log-probability (-inf when no finite output exists), ``finished`` whether the search ended
    within its node budget (otherwise ``tokens`` is the best found, not proven best),
    ``nodes`` the decoder steps taken, ``from_bound`` whether nothing beat the bound given."""

    tokens: list[int]
    score: float
    finished: bool
    nodes: int
    from_bound: bool


@torch.no_grad()
def exact_search(
    network: Seq2SeqNetwork,
    src: Tensor,
    src_mask: Tensor,
    *,
    max_nodes: int,
    max_len_a: float,
    max_len_b: int,
    min_len: int,
    bound: tuple[float, list[int]] | None = None,
) -> ExactResult:
    """The highest-scoring output for the one sentence of src [1, S] (module docstring).

    ``bound`` (score, tokens): a known output and its log-probability (a beam's output); it is
    returned when nothing in the space scores strictly higher.
    """
    if src.size(0) != 1:
        raise ValueError(f"exact_search takes one sentence, got a batch of {src.size(0)}")
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be >= 1, got {max_nodes}")
    limit = int(max_output_lengths(src_mask, max_len_a, max_len_b)[0])
    best_score, best_tokens = bound if bound is not None else (float("-inf"), [])
    from_bound = bound is not None
    one = torch.zeros(1, dtype=torch.long, device=src.device)
    root = network.init_state(network.encode(src, src_mask), max_length=limit)
    # a node: (score of its prefix, its tokens, the state before its last token, that token);
    # the state is shared by siblings and copied before a step, which consumes what it gets
    stack: list[tuple[float, list[int], BatchState, int]] = [(0.0, [], root, network.bos_id)]
    nodes = 0
    while stack:
        score, tokens, state, last = stack.pop()
        if score <= best_score:  # the bound tightened since this node was pushed
            continue
        if nodes == max_nodes:
            return ExactResult(best_tokens, best_score, False, nodes, from_bound)
        nodes += 1
        out = network.step(torch.tensor([last], device=src.device), state.select(one))
        log_probs = torch.log_softmax(out.logits[0].float(), dim=-1)
        log_probs = log_probs.masked_fill(log_probs.isnan(), float("-inf"))
        length = len(tokens) + 1  # of any child, EOS counted
        if length <= min_len:
            log_probs[network.eos_id] = float("-inf")
        ended = score + float(log_probs[network.eos_id])
        if ended > best_score:
            best_score, best_tokens, from_bound = ended, tokens, False
        log_probs[network.eos_id] = float("-inf")
        children = score + log_probs
        if length >= limit:  # the limit cuts here: each child is a complete output
            top = float(children.max())
            if top > best_score:
                best_score, from_bound = top, False
                best_tokens = tokens + [int(children.argmax())]
            continue
        alive = (children > best_score).nonzero().squeeze(1)
        # pushed least probable first, so the most probable child is expanded next
        for token in alive[children[alive].argsort()].tolist():
            stack.append((float(children[token]), tokens + [token], out.state, token))
    return ExactResult(best_tokens, best_score, True, nodes, from_bound)


def sequence_log_probs(
    network: Seq2SeqNetwork, src: Tensor, src_mask: Tensor, outputs: list[list[int]]
) -> list[float]:
    """log P(y | x) of each output y (target ids, no BOS/EOS) with EOS appended: the score an
    output that ended in EOS has under the model, by one teacher-forced pass (forced decoding).
    src [B, S] and ``outputs`` [B] pair row for row."""
    if len(outputs) != src.size(0):
        raise ValueError(f"{len(outputs)} outputs for {src.size(0)} sources")
    longest = max(len(y) for y in outputs) + 1
    tgt_in = torch.full((len(outputs), longest), network.pad_id, dtype=torch.long)
    tgt_out = torch.full_like(tgt_in, network.pad_id)
    for b, y in enumerate(outputs):
        tgt_in[b, : len(y) + 1] = torch.tensor([network.bos_id, *y])
        tgt_out[b, : len(y) + 1] = torch.tensor([*y, network.eos_id])
    tgt_in, tgt_out = tgt_in.to(src.device), tgt_out.to(src.device)
    with torch.no_grad():
        logits = network.teacher_forced(src, src_mask, tgt_in).logits
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    picked = log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)
    picked = picked.masked_fill(tgt_out == network.pad_id, 0.0)
    return picked.sum(dim=1).tolist()
