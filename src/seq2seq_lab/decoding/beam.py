"""Batched beam search, shared by every model family through the network contract.

Shapes: B batch, K beam size, S source length, V target vocabulary, t the current step.

The batch holds K rows per sentence still searching. A sentence whose search has ended keeps
its rows (their steps are computed and ignored) until ``COMPACT_SHARE`` of the sentences in the
batch have ended; then their rows are dropped in one copy of the decoder state
(``BatchState.select``). In between, the state is only re-indexed *within* each sentence's
group of K rows, in place, which lets per-sentence tensors (encoder memory, projected keys)
skip the re-indexing (``BatchState.reorder_beams``).

Search (fairseq's scheme): at each step the 2K best continuations of the K live hypotheses are
ranked by total log-probability; those among the top K that end in EOS are finalised with the
length-normalised score s / lp(|y|), lp = ((5 + |y|)/6)^alpha (GNMT), |y| counting EOS; the K
best that do not end in EOS stay alive. A sentence is done when it has K finalised hypotheses,
or when it reaches its length limit, which finalises all its live ones (|y| the limit, no EOS);
the search stops when every sentence is done. Only finite scores are finalised; a NaN
log-probability (NaN or +inf logits: a diverged network) counts as -inf. The output is each
sentence's best finalised hypothesis by s / lp(|y|), or the empty hypothesis scored -inf for a
sentence without any finite one: every sentence gets an output, whatever the network emits.
"""

from __future__ import annotations

import torch
from torch import Tensor

from seq2seq_lab.decoding.greedy import finished_rows_to_drop
from seq2seq_lab.decoding.hypotheses import Hypotheses, gnmt_length_penalty, max_output_lengths
from seq2seq_lab.models.network import Seq2SeqNetwork
from seq2seq_lab.models.state import expand_index


@torch.no_grad()
def beam_search(
    network: Seq2SeqNetwork,
    src: Tensor,
    src_mask: Tensor,
    *,
    beam_size: int,
    length_penalty: float,
    max_len_a: float,
    max_len_b: int,
    min_len: int,
    return_attention: bool = False,
) -> Hypotheses:
    """Each sentence's best finalised hypothesis by s / lp (see the module docstring).

    Settings are required keywords: their defaults live in :class:`DecodingSettings` only.
    """
    if beam_size < 1:
        raise ValueError(f"decoding.beam_size must be >= 1, got {beam_size}")
    device = src.device
    B, K = src.size(0), beam_size
    limits = max_output_lengths(src_mask, max_len_a, max_len_b)  # [B], EOS included
    max_steps = int(limits.max())  # the most steps taken: the decoder state is sized for them
    state = network.init_state(network.encode(src, src_mask), max_length=max_steps)
    state = state.select(expand_index(B, K, device))

    # Only beam 0 is live at the start, so the first top-k does not pick K copies of one token.
    scores = torch.full((B, K), float("-inf"), device=device)
    scores[:, 0] = 0.0
    prefix = torch.empty((B * K, 0), dtype=torch.long, device=device)  # tokens so far
    attn_history: Tensor | None = None  # [B*K, t, S]
    prev = torch.full((B * K,), network.bos_id, dtype=torch.long, device=device)
    finalised: list[list[tuple[float, list[int], Tensor | None]]] = [[] for _ in range(B)]
    done = torch.zeros(B, dtype=torch.bool, device=device)
    group_offset = (torch.arange(B, device=device) * K).unsqueeze(1)  # [B, 1]
    # Per-sentence tensors (scores, done, limits, prefix rows) hold the sentences still in the
    # batch; ``live`` maps them to the input's sentences (``finalised`` is in input order).
    live = torch.arange(B, device=device)
    live_limits = limits

    for t in range(max_steps):
        B = live.numel()
        out = network.step(prev, state)
        log_probs = torch.log_softmax(out.logits.float(), dim=-1)  # [B*K, V]
        # NaN (from NaN or +inf logits) would outrank every finite score in topk
        log_probs = log_probs.masked_fill(log_probs.isnan(), float("-inf"))
        vocab = log_probs.size(-1)
        if t < min_len:
            log_probs[:, network.eos_id] = float("-inf")
        if return_attention and out.attention is not None:
            step_attn = out.attention.unsqueeze(1)  # [B*K, 1, S]
            attn_history = (
                step_attn if attn_history is None else torch.cat([attn_history, step_attn], dim=1)
            )
        candidates = (scores.unsqueeze(-1) + log_probs.view(B, K, vocab)).view(B, K * vocab)
        top_scores, top_index = candidates.topk(2 * K, dim=1)  # [B, 2K], best first
        top_beam, top_token = top_index // vocab, top_index % vocab
        ends = top_token == network.eos_id
        at_limit = t + 1 >= live_limits  # [B]: this step's tokens are the last allowed

        # Finalise EOS continuations ranked in the top K (for sentences still searching).
        # Only finite ones: with fewer than K finite continuations (a small vocabulary, EOS
        # forbidden by min_len, the first step's empty beams) -inf rows fill the top K, and
        # their EOS would take pool places and end the search before real hypotheses finish.
        rank = torch.arange(2 * K, device=device).unsqueeze(0)
        to_finalise = ends & (rank < K) & ~done.unsqueeze(1) & torch.isfinite(top_scores)
        sentence = live.tolist()
        for b, r in to_finalise.nonzero().tolist():
            if len(finalised[sentence[b]]) < K:
                row = b * K + int(top_beam[b, r])
                _finalise(
                    finalised[sentence[b]],
                    float(top_scores[b, r]),
                    prefix[row],
                    attn_history,
                    row,
                    t + 1,
                    length_penalty,
                    with_eos=True,
                )

        # The K best non-EOS continuations stay alive.
        live_scores = top_scores.masked_fill(ends, float("-inf"))
        keep_scores, keep = live_scores.topk(K, dim=1)  # [B, K]
        keep_beam, keep_token = top_beam.gather(1, keep), top_token.gather(1, keep)
        rows = (group_offset + keep_beam).view(-1)  # [B*K] rows to continue from
        prefix = torch.cat([prefix.index_select(0, rows), keep_token.view(-1, 1)], dim=1)
        if attn_history is not None:
            attn_history = attn_history.index_select(0, rows)
        scores = keep_scores

        # A sentence at its length limit finalises its live hypotheses, unfinished: all of
        # them, even into a full pool, since this step's EOS hypotheses (same length, ranked
        # by the same scores) may have filled it although a live one scores higher.
        for b in (at_limit & ~done).nonzero().flatten().tolist():
            for k in range(K):
                if torch.isfinite(scores[b, k]):
                    _finalise(
                        finalised[sentence[b]],
                        float(scores[b, k]),
                        prefix[b * K + k],
                        attn_history,
                        b * K + k,
                        t + 1,
                        length_penalty,
                        with_eos=False,
                    )
        full = torch.tensor([len(finalised[b]) >= K for b in sentence], device=device)
        done |= at_limit | full
        # No finite live hypothesis: every later continuation scores -inf and is never
        # finalised, so stepping on until the limit could change nothing.
        done |= ~torch.isfinite(scores).any(dim=1)
        if bool(done.all()):
            break
        prev = keep_token.view(-1)
        keep = finished_rows_to_drop(done)
        if keep is None:
            state = out.state.reorder_beams(rows)
            continue
        # Drop the ended sentences' rows: one gather does the beam reorder and the drop.
        kept_rows = (keep.unsqueeze(1) * K + torch.arange(K, device=device)).view(-1)
        state = out.state.select(rows.index_select(0, kept_rows))
        prev = prev.index_select(0, kept_rows)
        prefix = prefix.index_select(0, kept_rows)
        if attn_history is not None:
            attn_history = attn_history.index_select(0, kept_rows)
        scores, done = scores.index_select(0, keep), done.index_select(0, keep)
        live, live_limits = live.index_select(0, keep), live_limits.index_select(0, keep)
        group_offset = (torch.arange(keep.numel(), device=device) * K).unsqueeze(1)

    src_lengths = src_mask.sum(dim=1).tolist()
    tokens, best_scores, attention, n_best = [], [], [], []
    for b in range(src.size(0)):
        if not finalised[b]:
            # No finite hypothesis at all: the network emits NaN (a diverged run) or min_len
            # bars the only possible token. The empty hypothesis, scored -inf.
            no_attn = None if attn_history is None else attn_history.new_zeros(0, src.size(1))
            finalised[b].append((float("-inf"), [], no_attn))
        # best first; sorted() is stable, so among equal scores the first finalised leads,
        # as max() picked it
        ranked = sorted(finalised[b], key=lambda h: h[0], reverse=True)
        score, toks, attn = ranked[0]
        tokens.append(toks)
        best_scores.append(score)
        n_best.append([(s, hyp) for s, hyp, _ in ranked])
        if attn is not None:
            attention.append(attn[:, : src_lengths[b]].cpu())
    return Hypotheses(tokens, best_scores, attention if attention else None, n_best)


def _finalise(
    pool: list,
    score: float,
    prefix_row: Tensor,
    attn_history: Tensor | None,
    row: int,
    length: int,
    alpha: float,
    *,
    with_eos: bool,
) -> None:
    """Add a hypothesis of ``length`` tokens (EOS included when ``with_eos``) to the pool.

    With EOS, ``prefix_row`` (from before this step's token was appended) is the whole
    hypothesis; without, the caller passes the row after appending, whose tokens all count.
    """
    tokens = prefix_row.tolist()
    attn = None if attn_history is None else attn_history[row, :length]
    pool.append((score / gnmt_length_penalty(length, alpha), tokens, attn))
