"""Greedy and beam search on a scripted network, checked against hand-computed tokens and scores.

The network's next-token probabilities are a table (tests/scripted_network.py), so each test
decides which tokens rank where; the expected score of a hypothesis is written as the product
of its probabilities, divided by the GNMT penalty lp(|y|) = ((5 + |y|) / 6) ** alpha where beam
search applies it (|y| counts EOS when it is emitted).
"""

from __future__ import annotations

import math

import pytest
import torch
from scripted_network import EOS, A, B, C, D, ScriptedNetwork, lp, sources

from seq2seq_lab.decoding import DecodingSettings, beam_search, decode, greedy_search


def beam(net, src, mask, *, beam_size, length_penalty, max_len_b, min_len=0):
    """Beam search with a limit of max_len_b tokens (EOS included) whatever the source."""
    return beam_search(
        net,
        src,
        mask,
        beam_size=beam_size,
        length_penalty=length_penalty,
        max_len_a=0.0,
        max_len_b=max_len_b,
        min_len=min_len,
    )


def test_eos_and_length_limit_in_the_same_step():
    # K = 2, alpha 1, limit 3 tokens. Both sentences finalise [] (EOS first) at step 1; at
    # step 3, the last allowed, an EOS ranks in the top K and live hypotheses remain.
    live_wins = {
        (): {A: 0.5, EOS: 0.3, B: 0.2},
        (A,): {C: 0.6, D: 0.4},
        (B,): {C: 0.7, EOS: 0.3},
        (A, C): {D: 0.8, EOS: 0.2},  # A C D: 0.24, the best of step 3, not an EOS
        (A, D): {EOS: 0.9, C: 0.1},  # A D EOS: 0.18, fills the pool of K = 2
    }
    eos_wins = {
        (): {A: 0.6, EOS: 0.25, B: 0.15},
        (A,): {C: 0.6, D: 0.4},
        (B,): {C: 1.0},
        (A, C): {EOS: 0.6, D: 0.4},
        (A, D): {EOS: 0.95, C: 0.05},  # A D EOS: 0.228, the best of step 3
    }
    net = ScriptedNetwork([live_wins, eos_wins])
    src, mask = sources(0, 1)
    hyps = beam(net, src, mask, beam_size=2, length_penalty=1.0, max_len_b=3)
    # [] scores log(0.3) / lp(1) = -1.20 and log(0.25) = -1.39: both lose to 3-token
    # hypotheses once normalised, although their log-probabilities are higher.
    assert hyps.tokens == [[A, C, D], [A, D]]
    # A C D was cut at the limit: 3 tokens, no EOS; A D EOS counts its EOS: also 3.
    expected = [math.log(0.5 * 0.6 * 0.8) / lp(3, 1.0), math.log(0.6 * 0.4 * 0.95) / lp(3, 1.0)]
    assert hyps.scores == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("beam_size", [1, 2, 3])
@pytest.mark.parametrize("min_len", [0, 1, 2, 3])
def test_min_len_forbids_eos_even_when_it_is_the_most_probable_token(min_len, beam_size):
    # EOS is the most probable token after every prefix; greedy and beam (alpha 0) must emit
    # exactly min_len words, then EOS. Forbidding EOS does not renormalise the other tokens.
    script = {
        (): {EOS: 0.7, A: 0.3},
        (A,): {EOS: 0.6, B: 0.4},
        (A, B): {EOS: 0.9, C: 0.1},
        (A, B, C): {EOS: 1.0},
    }
    chosen = [0.3, 0.4, 0.1][:min_len] + [[0.7, 0.6, 0.9, 1.0][min_len]]  # words, then EOS
    net = ScriptedNetwork([script])
    src, mask = sources(0)
    if beam_size == 1:
        hyps = greedy_search(net, src, mask, max_len_a=0.0, max_len_b=10, min_len=min_len)
    else:
        hyps = beam(net, src, mask, beam_size=beam_size, length_penalty=0.0, max_len_b=10,
                    min_len=min_len)  # fmt: skip
    assert hyps.tokens == [[A, B, C][:min_len]]
    assert hyps.scores == pytest.approx([sum(math.log(p) for p in chosen)], rel=1e-6)


@pytest.mark.parametrize("beam_size", [2, 3, 5, 8])
def test_beam_wider_than_the_live_continuations(beam_size):
    # At most two finite continuations per step (every other token has probability 0) and
    # beams up to 8 (2K = 16 candidates > the vocabulary of 8): rows without a finite
    # continuation score -inf. They must never be finalised, so they can neither fill a
    # sentence's pool during the forced opening nor be returned.
    opening = (C, D, C, D)  # forced: probability 1 at each step
    branches = {
        (): {A: 0.6, B: 0.4},
        (A,): {C: 0.5, EOS: 0.5},
        (B,): {D: 1.0},
        (A, C): {EOS: 0.7, D: 0.3},
        (B, D): {EOS: 0.9, A: 0.1},
        (A, C, D): {EOS: 1.0},
        (B, D, A): {EOS: 1.0},
    }
    script = {opening[:i]: {opening[i]: 1.0} for i in range(len(opening))}
    script |= {opening + prefix: probs for prefix, probs in branches.items()}
    net = ScriptedNetwork([script, script])
    src, mask = sources(0, 0)
    hyps = beam(net, src, mask, beam_size=beam_size, length_penalty=0.0, max_len_b=10)
    # complete: A 0.3, A C 0.21, B D 0.36, A C D 0.09, B D A 0.04 (after the opening)
    assert hyps.tokens == [[*opening, B, D]] * 2
    assert hyps.scores == pytest.approx([math.log(0.4 * 0.9)] * 2, rel=1e-6)


@pytest.mark.parametrize(
    "alpha,tokens,score",
    [
        (0.0, [], math.log(0.4)),  # log-probability alone: the empty hypothesis
        (1.0, [A], math.log(0.6 * 0.6) / lp(2, 1.0)),  # -1.02 / (7/6) = -0.88 > log(0.4)
    ],
)
def test_length_penalty_alpha_decides_the_winner(alpha, tokens, score):
    script = {(): {A: 0.6, EOS: 0.4}, (A,): {EOS: 0.6, B: 0.4}, (A, B): {EOS: 1.0}}
    net = ScriptedNetwork([script])
    src, mask = sources(0)
    hyps = beam(net, src, mask, beam_size=2, length_penalty=alpha, max_len_b=5)
    assert hyps.tokens == [tokens]
    assert hyps.scores == pytest.approx([score], rel=1e-6)


def test_greedy_stops_each_row_at_its_eos_or_limit_and_sums_the_chosen_log_probs():
    ends_early = {(): {A: 0.7, B: 0.3}, (A,): {EOS: 0.8, C: 0.2}}
    runs_on = {
        (): {B: 0.6, A: 0.4},
        (B,): {C: 0.9, EOS: 0.1},
        (B, C): {D: 0.8, EOS: 0.2},
        (B, C, D): {EOS: 0.7, A: 0.3},
    }
    # After its EOS a row is still stepped (fed PAD); the fallback would make it emit D.
    net = ScriptedNetwork([ends_early, runs_on], fallback={D: 0.6, C: 0.4})
    src = torch.tensor([[0, 0, 0], [1, 1, 1], [1, 1, 1]])
    mask = torch.tensor([[True, True, True], [True, True, True], [True, False, False]])
    # limit |x| + 2 tokens: 5, 5 and 3; the third row is cut before its EOS
    hyps = greedy_search(net, src, mask, max_len_a=1.0, max_len_b=2, min_len=0)
    assert hyps.tokens == [[A], [B, C, D], [B, C, D]]
    expected = [
        math.log(0.7 * 0.8),  # A EOS
        math.log(0.6 * 0.9 * 0.8 * 0.7),  # B C D EOS
        math.log(0.6 * 0.9 * 0.8),  # B C D, no EOS
    ]
    assert hyps.scores == pytest.approx(expected, rel=1e-6)


def test_beam_adds_nothing_to_a_sentence_after_its_length_limit():
    # K = 4 but three hypotheses, so the first sentence ends at its limit (2 tokens) with a
    # pool of three: A EOS, and A B, B A cut. Its rows are still stepped while the second
    # sentence (limit 4) goes on, and would offer A B EOS, which alpha 1 ranks above A B.
    short = {(): {A: 0.6, B: 0.4}, (A,): {B: 0.9, EOS: 0.1}, (B,): {A: 1.0}, (A, B): {EOS: 1.0}}
    long = {(): {C: 1.0}, (C,): {D: 1.0}, (C, D): {C: 1.0}, (C, D, C): {EOS: 1.0}}
    net = ScriptedNetwork([short, long], fallback={EOS: 1.0})
    src = torch.tensor([[0, 0, 0], [1, 1, 1]])
    mask = torch.tensor([[True, False, False], [True, True, True]])
    hyps = beam_search(net, src, mask, beam_size=4, length_penalty=1.0, max_len_a=1.0,
                       max_len_b=1, min_len=0)  # fmt: skip
    assert hyps.tokens == [[A, B], [C, D, C]]
    # A B cut: log(0.54) / lp(2) = -0.53 (A B EOS would score log(0.54) / lp(3) = -0.46)
    assert hyps.scores == pytest.approx([math.log(0.6 * 0.9) / lp(2, 1.0), 0.0], abs=1e-6)


def test_beam_stops_a_sentence_whose_live_hypotheses_all_score_minus_infinity():
    # Two complete hypotheses (EOS, A EOS) and nothing else of finite probability: after
    # step 2 a beam of 5 holds only -inf rows, and the search must end, not run to the limit.
    net = ScriptedNetwork([{(): {A: 0.6, EOS: 0.4}, (A,): {EOS: 1.0}}])
    src, mask = sources(0)
    hyps = beam(net, src, mask, beam_size=5, length_penalty=0.0, max_len_b=100)
    assert hyps.tokens == [[A]] and hyps.scores == pytest.approx([math.log(0.6)], rel=1e-6)
    assert net.steps == 2


class NanNetwork(ScriptedNetwork):
    """Logits all NaN, as a diverged run's are."""

    def step(self, prev_tokens, state):
        out = super().step(prev_tokens, state)
        return out._replace(logits=torch.full_like(out.logits, float("nan")))


@pytest.mark.parametrize(
    "net,min_len",
    [(NanNetwork([{}]), 0), (ScriptedNetwork([{(): {EOS: 1.0}}]), 1)],
    ids=["nan-logits", "min_len-bars-the-only-token"],
)
def test_beam_without_any_finite_hypothesis_returns_the_empty_one(net, min_len):
    # e.g. a diverged run's test set is still decoded (and scored BLEU 0), not a crash
    src, mask = sources(0, 0, length=3)
    hyps = beam(net, src, mask, beam_size=3, length_penalty=1.0, max_len_b=4, min_len=min_len)
    assert hyps.tokens == [[], []]
    assert hyps.scores == [float("-inf")] * 2


# ------------------------------------------------------------------ a broken (diverged) network
GOOD = {(): {A: 0.6, EOS: 0.4}, (A,): {B: 0.7, EOS: 0.3}, (A, B): {EOS: 1.0}}


class BrokenNetwork(ScriptedNetwork):
    """The scripted network, except that the rows of the sentences whose script is in
    ``broken`` get the logits ``value`` from step ``from_step`` on (1: the first step): on
    every token (``everywhere``), or on token B only."""

    def __init__(self, value, *, broken, from_step, everywhere):
        super().__init__([GOOD, GOOD])
        self.value, self.broken = value, broken
        self.from_step, self.everywhere = from_step, everywhere

    def step(self, prev_tokens, state):
        out = super().step(prev_tokens, state)
        logits = out.logits.clone()
        if state.prefix.size(1) + 1 >= self.from_step:
            for row, script in enumerate(state.script.tolist()):
                if script in self.broken:
                    if self.everywhere:
                        logits[row] = self.value
                    else:
                        logits[row, B] = self.value
        return out._replace(logits=logits)


def decode_with(net, src, mask, beam_size):
    settings = DecodingSettings(
        beam_size=beam_size, length_penalty=1.0, max_len_a=0.0, max_len_b=5, min_len=0
    )
    return decode(net, src, mask, settings)


NON_FINITE = [
    pytest.param(float("nan"), True, id="nan-everywhere"),
    pytest.param(float("nan"), False, id="nan-on-one-token"),
    pytest.param(float("inf"), True, id="+inf-everywhere"),
    pytest.param(float("inf"), False, id="+inf-on-one-token"),
    pytest.param(float("-inf"), True, id="-inf-everywhere"),
]


@pytest.mark.parametrize("beam_size", [1, 2, 3])
@pytest.mark.parametrize("value,everywhere", NON_FINITE)
def test_a_sentence_whose_logits_are_not_finite_from_the_start_gets_the_empty_hypothesis(
    value, everywhere, beam_size
):
    # sentence 1 is broken from its first step (NaN or +inf anywhere in a row makes the whole
    # log_softmax row NaN); sentence 0, in the same batch, must decode as if it were alone
    net = BrokenNetwork(value, broken={1}, from_step=1, everywhere=everywhere)
    src, mask = sources(0, 1, length=2)
    hyps = decode_with(net, src, mask, beam_size)
    alone = decode_with(ScriptedNetwork([GOOD]), *sources(0, length=2), beam_size)
    assert hyps.tokens == [alone.tokens[0], []]
    assert hyps.scores[0] == pytest.approx(alone.scores[0]) and math.isfinite(hyps.scores[0])
    assert hyps.scores[1] == float("-inf")


@pytest.mark.parametrize("beam_size", [1, 2, 3])
@pytest.mark.parametrize("value,everywhere", NON_FINITE)
def test_a_network_that_breaks_mid_sentence_still_gives_every_sentence_a_hypothesis(
    value, everywhere, beam_size
):
    # Every sentence breaks at step 2, after A: no finite continuation of A exists. Greedy
    # ends there with the empty hypothesis (-inf), as a beam of 1 finalises nothing; a wider
    # beam keeps EOS, finalised at step 1 (log 0.4 / lp(1)).
    net = BrokenNetwork(value, broken={0, 1}, from_step=2, everywhere=everywhere)
    src, mask = sources(0, 1, length=2)
    hyps = decode_with(net, src, mask, beam_size)
    expected = ([], float("-inf")) if beam_size == 1 else ([], math.log(0.4) / lp(1, 1.0))
    assert hyps.tokens == [expected[0]] * 2
    assert hyps.scores == pytest.approx([expected[1]] * 2)
    if beam_size == 1:  # greedy equals a one-hypothesis beam here too
        one = beam(net, src, mask, beam_size=1, length_penalty=1.0, max_len_b=5)
        assert (one.tokens, one.scores) == (hyps.tokens, hyps.scores)


def test_minus_infinity_on_some_tokens_is_a_zero_probability_not_a_breakdown():
    # B at -inf after A leaves EOS (renormalised to 1): A EOS, log 0.6, for greedy and beam
    net = BrokenNetwork(float("-inf"), broken={0}, from_step=2, everywhere=False)
    src, mask = sources(0, length=2)
    assert decode_with(net, src, mask, 1).tokens == [[A]]
    hyps = decode_with(net, src, mask, 2)
    assert hyps.tokens == [[A]]
    assert hyps.scores == pytest.approx([math.log(0.6) / lp(2, 1.0)])


class NanAfterA(ScriptedNetwork):
    """NaN logits on the rows whose last token is A: one beam broken, the others sound."""

    def step(self, prev_tokens, state):
        out = super().step(prev_tokens, state)
        return out._replace(
            logits=out.logits.masked_fill((prev_tokens == A).unsqueeze(1), math.nan)
        )


def test_beam_keeps_the_sound_hypotheses_beside_a_broken_one():
    # K = 2 keeps A (0.5) and B (0.3) at step 1. At step 2 A's row is NaN: NaN outranks every
    # number in topk, so unless NaN counts as -inf it takes the places of B EOS (log 0.3).
    net = NanAfterA([{(): {A: 0.5, B: 0.3, EOS: 0.2}, (B,): {EOS: 1.0}}])
    src, mask = sources(0)
    hyps = beam(net, src, mask, beam_size=2, length_penalty=1.0, max_len_b=5)
    assert hyps.tokens == [[B]]
    assert hyps.scores == pytest.approx([math.log(0.3) / lp(2, 1.0)])


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_n_best_holds_every_finalised_hypothesis_best_first(alpha):
    """A beam of 2 finalises the empty output (0.4) at step 1 and A (0.6 * 0.6) at step 2, when
    its pool is full: A B (0.6 * 0.4) is never finalised."""
    script = {(): {A: 0.6, EOS: 0.4}, (A,): {EOS: 0.6, B: 0.4}, (A, B): {EOS: 1.0}}
    net = ScriptedNetwork([script])
    src, mask = sources(0)
    hyps = beam(net, src, mask, beam_size=2, length_penalty=alpha, max_len_b=5)
    (ranked,) = hyps.n_best
    empty, a = (math.log(0.4) / lp(1, alpha), []), (math.log(0.6 * 0.6) / lp(2, alpha), [A])
    expected = [a, empty] if a[0] > empty[0] else [empty, a]
    assert [t for _, t in ranked] == [t for _, t in expected]
    assert [s for s, _ in ranked] == pytest.approx([s for s, _ in expected], rel=1e-6)
    assert ranked[0] == (hyps.scores[0], hyps.tokens[0])
