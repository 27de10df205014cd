"""Exact search (decoding/exact.py) against an enumeration of every output.

The oracle here enumerates the whole output space of a scripted network (tests/scripted_network.py)
from its table alone, as beam search defines that space: outputs ending in EOS within the
length limit (EOS counted) and outputs the limit cuts, EOS forbidden before ``min_len`` tokens.
On real networks (a Transformer with its in-place key/value cache, Luong's RNN) the oracle
scores every output by forced decoding.
"""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path

import hydra
import pytest
import torch
from conftest import FAMILIES
from hydra import compose, initialize_config_dir
from scripted_network import EOS, A, B, C, D, ScriptedNetwork, sources

from seq2seq_lab.decoding import beam_search, greedy_search
from seq2seq_lab.decoding.exact import exact_search, sequence_log_probs

WORDS = (A, B, C, D)
CONF = Path(__file__).resolve().parents[1] / "conf"


def random_script(rng: random.Random, depth: int):
    """Every prefix up to ``depth`` tokens gets a random distribution over EOS and the words,
    some tokens left at probability 0."""
    script = {}
    for n in range(depth + 1):
        for prefix in itertools.product(WORDS, repeat=n):
            tokens = [t for t in (EOS, *WORDS) if rng.random() > 0.25] or [EOS]
            weights = [rng.random() ** 3 + 1e-3 for _ in tokens]
            total = sum(weights)
            script[prefix] = {t: w / total for t, w in zip(tokens, weights)}
    return script


def enumerate_best(script, limit: int, min_len: int = 0):
    """(log-probability, tokens) of the best output, by visiting every one."""
    best = (float("-inf"), [])

    def visit(prefix, logp):
        nonlocal best
        row = script.get(prefix, {EOS: 1.0})
        length = len(prefix) + 1
        for token, p in row.items():
            score = logp + math.log(p)
            if token == EOS:
                if length > min_len and score > best[0]:
                    best = (score, list(prefix))
            elif length >= limit:
                if score > best[0]:
                    best = (score, list(prefix) + [token])
            else:
                visit(prefix + (token,), score)

    visit((), 0.0)
    return best


def exact(net, *, limit, min_len=0, max_nodes=100_000, bound=None, script=0):
    src, mask = sources(script)
    return exact_search(
        net, src, mask, max_nodes=max_nodes, max_len_a=0.0, max_len_b=limit, min_len=min_len,
        bound=bound,
    )  # fmt: skip


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize(("limit", "min_len"), [(4, 0), (3, 2)])
def test_exact_search_finds_what_enumerating_every_output_finds(seed, limit, min_len):
    script = random_script(random.Random(seed), depth=limit)
    result = exact(ScriptedNetwork([script]), limit=limit, min_len=min_len)
    score, tokens = enumerate_best(script, limit, min_len)
    assert result.finished
    assert result.tokens == tokens
    assert result.score == pytest.approx(score, rel=1e-5)


def test_the_empty_output_can_be_the_global_best_while_beam_finds_a_long_one():
    # Stahlberg and Byrne's case: EOS first (0.4) beats every output with words, although
    # "A" (0.6) leads the first step and beams keep following it
    script = {
        (): {EOS: 0.4, A: 0.6},
        (A,): {B: 0.7, EOS: 0.3},  # A: 0.18
        (A, B): {C: 0.6, EOS: 0.4},  # A B: 0.168
        (A, B, C): {EOS: 1.0},  # A B C: 0.252
    }
    net = ScriptedNetwork([script])
    src, mask = sources(0)
    greedy = greedy_search(net, src, mask, max_len_a=0.0, max_len_b=5, min_len=0)
    assert greedy.tokens == [[A, B, C]]
    result = exact(net, limit=5)
    assert result.finished and result.tokens == [] and result.score == pytest.approx(math.log(0.4))
    # with min_len 1 the empty output is out of the space: A B C is the best left
    assert exact(net, limit=5, min_len=1).tokens == [A, B, C]


def test_the_limit_cuts_outputs_without_eos_as_beam_search_does():
    script = {(): {A: 0.9, EOS: 0.1}, (A,): {A: 0.9, EOS: 0.1}, (A, A): {A: 0.9, EOS: 0.1}}
    result = exact(ScriptedNetwork([script]), limit=2)
    # the space: [] (0.1), [A] (0.09), and [A, A] cut at the limit (0.81)
    assert result.tokens == [A, A] and result.score == pytest.approx(math.log(0.81))
    src, mask = sources(0)
    hyps = beam_search(
        ScriptedNetwork([script]), src, mask, beam_size=3, length_penalty=0.0,
        max_len_a=0.0, max_len_b=2, min_len=0,
    )  # fmt: skip
    assert hyps.tokens == [result.tokens] and hyps.scores[0] == pytest.approx(result.score)


def test_a_bound_prunes_and_is_returned_when_nothing_beats_it():
    script = random_script(random.Random(3), depth=4)
    net = ScriptedNetwork([script])
    free = exact(net, limit=4)
    bounded = exact(net, limit=4, bound=(free.score, free.tokens))
    assert bounded.finished and bounded.from_bound and bounded.tokens == free.tokens
    assert bounded.nodes < free.nodes
    # no output scores above log-probability 0: nothing is expanded
    above = exact(net, limit=4, bound=(0.0, [B]))
    assert above.from_bound and above.tokens == [B] and above.nodes == 0


def test_a_search_out_of_nodes_says_so_and_returns_a_lower_bound():
    script = random_script(random.Random(0), depth=4)
    complete = exact(ScriptedNetwork([script]), limit=4)
    assert complete.nodes > 3
    cut = exact(ScriptedNetwork([script]), limit=4, max_nodes=3)
    assert not cut.finished and cut.nodes == 3
    assert cut.score <= complete.score


def test_sequence_log_probs_sum_the_tokens_and_eos():
    script = {(): {A: 0.6, EOS: 0.4}, (A,): {B: 0.5, EOS: 0.5}, (A, B): {EOS: 1.0}}
    net = ScriptedNetwork([script])
    src, mask = sources(0, 0, 0)
    scores = sequence_log_probs(net, src, mask, [[], [A], [A, B]])
    assert scores == pytest.approx([math.log(0.4), math.log(0.3), math.log(0.3)])


def _tiny(family: str):
    """The smoke size of a family with three words (PAD, UNK, BOS, EOS and ids 4-6), random
    weights, eval mode: every output of up to 3 tokens can be listed."""
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose("train", overrides=[f"model={family}", "scale=smoke"])
    torch.manual_seed(0)
    net = hydra.utils.instantiate(cfg.model, src_vocab_size=7, tgt_vocab_size=7, _convert_="all")
    return net.eval()


@pytest.mark.parametrize("family", FAMILIES)
def test_exact_search_on_real_networks_beats_every_beam_and_matches_the_enumeration(family):
    """Each family's decoder state stepped from one node to several children (the
    Transformer writes its cache in place): the DFS's best must be the enumeration's, scored
    as forced decoding scores it, and at least as good as every beam's output."""
    net = _tiny(family)
    src = torch.tensor([[4, 5, 6, 3]])
    mask = torch.ones_like(src, dtype=torch.bool)
    limit = 3
    words = [4, 5, 6, 1]  # UNK is an output the model may emit
    outputs = [list(y) for n in range(limit) for y in itertools.product(words, repeat=n)]
    with_eos = sequence_log_probs(net, src.repeat(len(outputs), 1), mask.repeat(len(outputs), 1),
                                  outputs)  # fmt: skip
    # outputs cut at the limit: log P of their tokens without EOS
    cut = [list(y) for y in itertools.product(words, repeat=limit)]
    cut_scores = [s - math.log(p) for s, p in zip(*_without_eos(net, src, mask, cut))]
    best = max(zip(with_eos + cut_scores, outputs + cut), key=lambda pair: pair[0])
    result = exact_search(net, src, mask, max_nodes=10_000, max_len_a=0.0, max_len_b=limit,
                          min_len=0)  # fmt: skip
    assert result.finished and result.tokens == best[1]
    assert result.score == pytest.approx(best[0], abs=1e-4)
    for k in (1, 2, 5):
        hyps = beam_search(net, src, mask, beam_size=k, length_penalty=0.0, max_len_a=0.0,
                           max_len_b=limit, min_len=0)  # fmt: skip
        assert hyps.scores[0] <= result.score + 1e-4


def _without_eos(net, src, mask, outputs):
    """(log P(y + EOS), P(EOS | y)) of each output, so that log P(y) = first - log(second)."""
    n = len(outputs)
    scores = sequence_log_probs(net, src.repeat(n, 1), mask.repeat(n, 1), outputs)
    tgt_in = torch.tensor([[net.bos_id, *y] for y in outputs])
    with torch.no_grad():
        logits = net.teacher_forced(src.repeat(n, 1), mask.repeat(n, 1), tgt_in).logits
    p_eos = torch.softmax(logits[:, -1].float(), dim=-1)[:, net.eos_id].tolist()
    return scores, p_eos
