"""RNN attention mechanisms: hand computations, the docs' worked example, masking, windows."""

from __future__ import annotations

import math

import pytest
import torch

from seq2seq_lab.models.attention.additive import (
    ConcatAdditiveAttention,
    FeedForwardAttention,
    SeparateAdditiveAttention,
)
from seq2seq_lab.models.attention.local import LocalMonotonicAttention, LocalPredictiveAttention
from seq2seq_lab.models.attention.multiplicative import (
    DotAttention,
    GeneralAttention,
    LocationAttention,
)

DQ, DK = 4, 6  # query and key widths (dot needs DK == DQ)


def mechanisms():
    """name -> (factory, key width, weights sum to 1 over the real keys)."""
    return {
        "dot": (lambda: DotAttention(query_size=DQ, key_size=DQ), DQ, True),
        "general": (lambda: GeneralAttention(query_size=DQ, key_size=DK), DK, True),
        "concat": (
            lambda: ConcatAdditiveAttention(query_size=DQ, key_size=DK, hidden_size=5),
            DK,
            True,
        ),
        "separate": (
            lambda: SeparateAdditiveAttention(query_size=DQ, key_size=DK, hidden_size=5),
            DK,
            True,
        ),
        "feedforward": (lambda: FeedForwardAttention(query_size=DQ, key_size=DK), DK, True),
        "location": (lambda: LocationAttention(query_size=DQ, max_positions=4), DK, True),
        "local_m": (
            lambda: LocalMonotonicAttention(
                scorer=GeneralAttention(query_size=DQ, key_size=DK), window_size=1
            ),
            DK,
            True,
        ),
        # local-p multiplies by a Gaussian after the softmax (paper): sums are <= 1
        "local_p": (
            lambda: LocalPredictiveAttention(
                scorer=GeneralAttention(query_size=DQ, key_size=DK), window_size=2, query_size=DQ
            ),
            DK,
            False,
        ),
    }


def padded_inputs(key_size: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    B, T, S = 3, 4, 7
    query = torch.randn(B, T, DQ, generator=g)
    keys = torch.randn(B, S, key_size, generator=g)
    values = torch.randn(B, S, 3, generator=g)
    lengths = torch.tensor([7, 5, 2])
    mask = torch.arange(S)[None, :] < lengths[:, None]
    return query, keys, values, mask


# ---- architectures.md section 4 ------------------------------------------------------------


def test_docs_worked_example_dot_attention():
    """q against 4 keys: scores [0.36, 2.4, -0.36, 0.36] -> weights [0.098, 0.756, 0.048, 0.098],
    result ~ [1.98, 2.98, 3.98, 4.98]. The docs print only k_1 and k_2; k_3 = -k_1 and
    k_4 = k_1 reproduce the documented scores of the other two keys."""
    q = torch.tensor([0.6, 1.2, -1.2, 1.8])
    k1 = torch.tensor([-0.2, 0.4, 1.2, 0.8])
    k2 = torch.tensor([0.2, 0.4, -0.6, 0.6])
    keys = torch.stack([k1, k2, -k1, k1])[None]  # [1, 4, 4]
    values = torch.tensor([[4.0, 5, 6, 7], [1, 2, 3, 4], [5, 6, 7, 8], [6, 7, 8, 9]])[None]
    attention = DotAttention(query_size=4, key_size=4)

    scores = attention.score(q[None, None], keys)[0, 0]
    torch.testing.assert_close(scores, torch.tensor([0.36, 2.4, -0.36, 0.36]))
    context, weights = attention(q[None], keys, values, torch.ones(1, 4, dtype=torch.bool))
    torch.testing.assert_close(
        weights[0], torch.tensor([0.098, 0.756, 0.048, 0.098]), atol=1e-3, rtol=0
    )
    torch.testing.assert_close(
        context[0], torch.tensor([1.98, 2.98, 3.98, 4.98]), atol=1e-2, rtol=0
    )


# ---- each score against a hand computation -------------------------------------------------


def _single(mech, query, keys):
    """Weights of one query [D] over keys [S, Dk] (no padding)."""
    mask = torch.ones(1, keys.size(0), dtype=torch.bool)
    return mech(query[None], keys[None], keys[None], mask).weights[0]


def _softmax(scores):
    exps = [math.exp(s) for s in scores]
    return torch.tensor([e / sum(exps) for e in exps])


@torch.no_grad()
def test_separate_additive_matches_formula():
    torch.manual_seed(0)
    mech = SeparateAdditiveAttention(query_size=DQ, key_size=DK, hidden_size=5)
    s, keys = torch.randn(DQ), torch.randn(3, DK)
    W1, W2, b2, v = mech.W1.weight, mech.W2.weight, mech.W2.bias, mech.v.weight[0]
    expected = _softmax([float(v @ torch.tanh(W1 @ h + W2 @ s + b2)) for h in keys])
    torch.testing.assert_close(_single(mech, s, keys), expected)


@torch.no_grad()
def test_concat_additive_matches_formula_and_equals_separate_form():
    torch.manual_seed(1)
    concat = ConcatAdditiveAttention(query_size=DQ, key_size=DK, hidden_size=5)
    s, keys = torch.randn(DQ), torch.randn(3, DK)
    W, b, v = concat.W.weight, concat.W.bias, concat.v.weight[0]
    expected = _softmax([float(v @ torch.tanh(W @ torch.cat([h, s]) + b)) for h in keys])
    torch.testing.assert_close(_single(concat, s, keys), expected)
    # W [h; s] = W_1 h + W_2 s: the separate form with W = [W_1 W_2] gives the same weights
    separate = SeparateAdditiveAttention(query_size=DQ, key_size=DK, hidden_size=5)
    with torch.no_grad():
        separate.W1.weight.copy_(W[:, :DK])
        separate.W2.weight.copy_(W[:, DK:])
        separate.W2.bias.copy_(b)
        separate.v.weight.copy_(concat.v.weight)
    torch.testing.assert_close(_single(separate, s, keys), _single(concat, s, keys))


@torch.no_grad()
def test_feedforward_matches_formula():
    torch.manual_seed(2)
    mech = FeedForwardAttention(query_size=DQ, key_size=DK)
    s, keys = torch.randn(DQ), torch.randn(3, DK)
    w = torch.cat([mech.w_query.weight[0], mech.w_key.weight[0]])  # w = [w_s ; w_h]
    expected = _softmax([math.tanh(float(w @ torch.cat([s, h]))) for h in keys])
    torch.testing.assert_close(_single(mech, s, keys), expected)


@torch.no_grad()
def test_general_matches_formula():
    torch.manual_seed(3)
    mech = GeneralAttention(query_size=DQ, key_size=DK)
    s, keys = torch.randn(DQ), torch.randn(3, DK)
    expected = _softmax([float(s @ mech.W_m.weight @ h) for h in keys])
    torch.testing.assert_close(_single(mech, s, keys), expected)


@torch.no_grad()
@pytest.mark.parametrize("name", ["dot", "general"])
def test_scaled_scores_divide_luongs_by_sqrt_of_the_query_width(name):
    """scaled: e_{t,i} / sqrt(Dq) with the same weights (not Luong's; multiplicative.py)."""
    torch.manual_seed(5)
    cls, key_size = (DotAttention, DQ) if name == "dot" else (GeneralAttention, DK)
    plain, scaled = (cls(query_size=DQ, key_size=key_size, scaled=flag) for flag in (False, True))
    scaled.load_state_dict(plain.state_dict())
    query, keys = torch.randn(2, 3, DQ), torch.randn(2, 5, key_size)
    expected = plain.score(query, plain.precompute_keys(keys)) / math.sqrt(DQ)
    torch.testing.assert_close(scaled.score(query, scaled.precompute_keys(keys)), expected)


def test_init_scale_multiplies_the_default_draw_of_w_m_and_nothing_else():
    """init_scale s: W_m ~ U(+-s/sqrt(Dk)), the same draw as nn.Linear's times s, so a seed's
    later parameters do not move."""
    torch.manual_seed(6)
    default = GeneralAttention(query_size=DQ, key_size=DK)
    after_default = torch.rand(3)
    torch.manual_seed(6)
    small = GeneralAttention(query_size=DQ, key_size=DK, init_scale=0.1)
    torch.testing.assert_close(small.W_m.weight, 0.1 * default.W_m.weight)
    torch.testing.assert_close(torch.rand(3), after_default)
    assert float(default.W_m.weight.detach().abs().max()) <= 1 / math.sqrt(DK)


@torch.no_grad()
def test_location_ignores_keys_and_reuses_last_row_past_max_positions():
    torch.manual_seed(4)
    mech = LocationAttention(query_size=DQ, max_positions=4)
    s = torch.randn(DQ)
    logits = mech.W_a.weight @ s + mech.W_a.bias  # one score per position
    torch.testing.assert_close(_single(mech, s, torch.randn(3, DK)), logits[:3].softmax(0))
    torch.testing.assert_close(_single(mech, s, torch.zeros(3, DK)), logits[:3].softmax(0))
    six = _single(mech, s, torch.randn(6, DK))  # positions 4, 5 reuse row 3
    expected = torch.cat([logits, logits[3:].expand(2)]).softmax(0)
    torch.testing.assert_close(six, expected)


def test_dot_needs_matching_sizes():
    with pytest.raises(ValueError, match="query size == key size"):
        DotAttention(query_size=4, key_size=8)


# ---- properties every mechanism has ---------------------------------------------------------


@pytest.mark.parametrize("name", list(mechanisms()))
def test_padding_gets_zero_weight_and_real_weights_sum_to_one(name):
    factory, key_size, sums_to_one = mechanisms()[name]
    torch.manual_seed(0)
    mech = factory()
    query, keys, values, mask = padded_inputs(key_size)
    context, weights = mech(query, keys, values, mask)
    assert weights.shape == (3, 4, 7) and context.shape == (3, 4, 3)
    assert torch.all(weights[~mask[:, None, :].expand_as(weights)] == 0)
    assert torch.all(weights >= 0)
    totals = weights.sum(-1)
    if sums_to_one:
        torch.testing.assert_close(totals, torch.ones_like(totals))
    else:
        assert torch.all(totals <= 1 + 1e-6) and torch.all(totals > 0)


@pytest.mark.parametrize("name", list(mechanisms()))
def test_changing_padded_keys_and_values_changes_nothing(name):
    factory, key_size, _ = mechanisms()[name]
    torch.manual_seed(0)
    mech = factory()
    query, keys, values, mask = padded_inputs(key_size)
    before = mech(query, keys, values, mask)
    noise = ~mask[:, :, None]
    after = mech(
        query,
        keys + 100 * noise * torch.randn_like(keys),
        values + 100 * noise * torch.randn_like(values),
        mask,
    )
    torch.testing.assert_close(after.context, before.context)
    torch.testing.assert_close(after.weights, before.weights)


@pytest.mark.parametrize("name", list(mechanisms()))
def test_block_of_queries_equals_one_query_at_a_time(name):
    """[B, T, D] queries (Luong's batched path) == T calls with [B, D] at positions t."""
    factory, key_size, _ = mechanisms()[name]
    torch.manual_seed(0)
    mech = factory()
    query, keys, values, mask = padded_inputs(key_size)
    block = mech(query, keys, values, mask, position=2)
    cached = mech.precompute_keys(keys)
    for t in range(query.size(1)):
        one = mech(query[:, t], keys, values, mask, projected_keys=cached, position=2 + t)
        torch.testing.assert_close(one.weights, block.weights[:, t])
        torch.testing.assert_close(one.context, block.context[:, t])


# ---- local windows --------------------------------------------------------------------------


def test_local_m_window_is_centred_on_t_and_clipped_to_the_source():
    torch.manual_seed(0)
    mech = LocalMonotonicAttention(
        scorer=GeneralAttention(query_size=DQ, key_size=DK), window_size=1
    )
    query, keys, values, mask = padded_inputs(DK)  # row lengths 7, 5, 2
    weights = mech(query, keys, values, mask, position=3).weights  # t = 3, 4, 5, 6
    for b, length in enumerate([7, 5, 2]):
        for i, t in enumerate(range(3, 7)):
            centre = min(t, length - 1)
            inside = [s for s in range(7) if abs(s - centre) <= 1 and s < length]
            outside = [s for s in range(7) if s not in inside]
            assert torch.all(weights[b, i, outside] == 0), (b, t)
            assert torch.all(weights[b, i, inside] > 0), (b, t)


@torch.no_grad()
def test_local_p_window_gaussian_and_predicted_centre():
    torch.manual_seed(0)
    D = 2
    scorer = GeneralAttention(query_size=DQ, key_size=DK)
    mech = LocalPredictiveAttention(scorer=scorer, window_size=D, query_size=DQ)
    query, keys, values, mask = padded_inputs(DK)
    weights = mech(query, keys, values, mask).weights
    lengths = mask.sum(-1)
    # p_t = (S_b - 1) * sigmoid(v_p^T tanh(W_p s_t)), by hand
    p = (lengths[:, None] - 1) * torch.sigmoid(
        torch.tanh(query @ mech.W_p.weight.T) @ mech.v_p.weight[0]
    )
    torch.testing.assert_close(mech.centre(query, lengths, 0), p)
    assert torch.all(p >= 0) and torch.all(p <= (lengths - 1)[:, None])
    scores = scorer.score(query, scorer.precompute_keys(keys))
    sigma = D / 2
    for b in range(3):
        for t in range(4):
            inside = [s for s in range(int(lengths[b])) if abs(s - float(p[b, t])) <= D]
            outside = [s for s in range(7) if s not in inside]
            assert torch.all(weights[b, t, outside] == 0)
            local = scores[b, t, inside].softmax(0)
            gauss = torch.tensor([math.exp(-((s - p[b, t]) ** 2) / (2 * sigma**2)) for s in inside])
            torch.testing.assert_close(weights[b, t, inside], local * gauss)


def test_local_p_centre_is_trained_through_the_gaussian():
    torch.manual_seed(0)
    mech = LocalPredictiveAttention(
        scorer=DotAttention(query_size=DQ, key_size=DQ), window_size=2, query_size=DQ
    )
    query, keys, values, mask = padded_inputs(DQ)
    mech(query, keys, values, mask).context.sum().backward()
    assert mech.W_p.weight.grad.abs().sum() > 0 and mech.v_p.weight.grad.abs().sum() > 0


def test_local_window_size_must_be_positive():
    with pytest.raises(ValueError, match="window_size >= 1"):
        LocalMonotonicAttention(scorer=DotAttention(query_size=2, key_size=2), window_size=0)
