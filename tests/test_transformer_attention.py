"""Scaled dot-product and multi-head attention against architectures.md section 5, torch's own
multi-head attention, and each other (explicit vs fused path)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.attention.multi_head import MultiHeadAttention
from seq2seq_lab.models.attention.scaled_dot_product import (
    RelativeEmbeddings,
    ScaledDotProductAttention,
)
from seq2seq_lab.models.transformer.positions import RelativePositions


def test_docs_example_q_k_v_equal_x() -> None:
    # architectures.md section 5: Q = K = V = X, d_k = 2
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])[None, None]  # [1, 1, 3, 2]
    out, weights = ScaledDotProductAttention()(x, x, x, need_weights=True)
    expected_weights = torch.tensor(
        [[0.401, 0.198, 0.401], [0.198, 0.401, 0.401], [0.248, 0.248, 0.503]]
    )
    expected_out = torch.tensor([[0.802, 0.599], [0.599, 0.802], [0.752, 0.752]])
    torch.testing.assert_close(weights[0, 0], expected_weights, atol=6e-4, rtol=0)
    torch.testing.assert_close(out[0, 0], expected_out, atol=6e-4, rtol=0)
    fused, _ = ScaledDotProductAttention()(x, x, x)
    torch.testing.assert_close(fused, out)


def test_docs_example_causal_mask_unscaled() -> None:
    # scores given directly: q_i . e_j = scores[i, j] with identity keys, no scaling
    scores = torch.tensor([[2.0, 1.0, 0.5], [1.2, 2.1, 0.7], [0.8, 1.3, 2.2]])[None, None]
    keys = torch.eye(3)[None, None]
    _, weights = ScaledDotProductAttention(scale=False)(
        scores, keys, keys, causal=True, need_weights=True
    )
    expected = torch.tensor([[1.0, 0.0, 0.0], [0.289, 0.711, 0.0], [0.149, 0.246, 0.605]])
    torch.testing.assert_close(weights[0, 0], expected, atol=6e-4, rtol=0)
    assert (weights[0, 0].triu(diagonal=1) == 0).all()


def test_docs_example_two_heads_shapes() -> None:
    torch.manual_seed(0)
    mha = MultiHeadAttention(d_model=8, heads=2)
    x = torch.randn(1, 4, 8)
    out = mha(x, x, need_weights=True)
    assert out.output.shape == (1, 4, 8)
    assert out.weights.shape == (1, 2, 4, 4)
    assert out.averaged_weights.shape == (1, 4, 4)
    torch.testing.assert_close(out.averaged_weights.sum(-1), torch.ones(1, 4))


def _random_qkv(b: int = 2, h: int = 3, n_q: int = 5, n_k: int = 5, e: int = 4):
    return torch.randn(b, h, n_q, e), torch.randn(b, h, n_k, e), torch.randn(b, h, n_k, e)


@pytest.mark.parametrize("scale", [True, False])
@pytest.mark.parametrize("masking", ["none", "padding", "causal", "both"])
def test_explicit_and_fused_paths_agree(scale: bool, masking: str) -> None:
    torch.manual_seed(1)
    q, k, v = (t.requires_grad_() for t in _random_qkv())
    key_mask = torch.tensor([[True] * 5, [True, True, True, False, False]])[:, None, None, :]
    mask = key_mask if masking in ("padding", "both") else None
    causal = masking in ("causal", "both")
    attention = ScaledDotProductAttention(scale=scale)
    fused, none = attention(q, k, v, mask=mask, causal=causal)
    explicit, weights = attention(q, k, v, mask=mask, causal=causal, need_weights=True)
    assert none is None and weights is not None
    torch.testing.assert_close(fused, explicit, atol=1e-6, rtol=1e-5)
    grads = [torch.autograd.grad(out.square().sum(), (q, k, v)) for out in (fused, explicit)]
    for g_fused, g_explicit in zip(*grads):
        torch.testing.assert_close(g_fused, g_explicit, atol=1e-5, rtol=1e-4)


def test_unscaled_means_no_division() -> None:
    torch.manual_seed(2)
    q, k, v = _random_qkv(e=16)
    _, weights = ScaledDotProductAttention(scale=False)(q, k, v, need_weights=True)
    torch.testing.assert_close(weights, (q @ k.transpose(-2, -1)).softmax(-1))
    _, scaled = ScaledDotProductAttention(scale=True)(q, k, v, need_weights=True)
    torch.testing.assert_close(scaled, (q @ k.transpose(-2, -1) / 4.0).softmax(-1))


@pytest.mark.parametrize("need_weights", [True, False])
def test_equal_to_torch_multihead_attention(need_weights: bool) -> None:
    torch.manual_seed(3)
    d, heads = 12, 3
    ours = MultiHeadAttention(d_model=d, heads=heads).eval()
    theirs = nn.MultiheadAttention(d, heads, batch_first=True).eval()
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        theirs.out_proj.weight.copy_(ours.w_o.weight)
        theirs.out_proj.bias.copy_(ours.w_o.bias)
    query, source = torch.randn(2, 4, d), torch.randn(2, 6, d)
    key_mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    out = ours(query, source, key_mask=key_mask, need_weights=need_weights)
    expected, expected_weights = theirs(
        query, source, source, key_padding_mask=~key_mask, average_attn_weights=False
    )
    torch.testing.assert_close(out.output, expected, atol=1e-5, rtol=1e-5)
    if need_weights:
        torch.testing.assert_close(out.weights, expected_weights, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("need_weights", [True, False])
def test_padding_keys_get_zero_weight_and_do_not_matter(need_weights: bool) -> None:
    torch.manual_seed(4)
    mha = MultiHeadAttention(d_model=8, heads=2).eval()
    query, source = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    key_mask = torch.tensor([[True] * 5, [True, True, False, False, False]])
    out = mha(query, source, key_mask=key_mask, need_weights=True)
    assert (out.weights[1, :, :, 2:] == 0).all()
    changed = source.clone()
    changed[1, 2:] = 100.0 * torch.randn(3, 8)  # new content at the padded positions only
    again = mha(query, changed, key_mask=key_mask, need_weights=need_weights)
    torch.testing.assert_close(again.output, out.output)


@pytest.mark.parametrize("need_weights", [True, False])
def test_fully_masked_row_is_zero_not_nan(need_weights: bool) -> None:
    torch.manual_seed(5)
    q, k, v = (t.requires_grad_() for t in _random_qkv(b=2))
    mask = torch.ones(2, 1, 5, 5, dtype=torch.bool)
    mask[0, :, 2] = False  # query 2 of sentence 0 sees no key
    out, weights = ScaledDotProductAttention()(q, k, v, mask=mask, need_weights=need_weights)
    assert torch.isfinite(out).all()
    assert (out[0, :, 2] == 0).all()
    if need_weights:
        assert (weights[0, :, 2] == 0).all()
    (grad_q,) = torch.autograd.grad(out.sum(), (q,))
    assert torch.isfinite(grad_q).all()


def test_heads_must_divide_d_model() -> None:
    with pytest.raises(ConfigError, match=r"model\.heads=3 must divide model\.d_model=8"):
        MultiHeadAttention(d_model=8, heads=3)


def test_relative_positions_follow_shaw_equations() -> None:
    """Shaw et al. eqs 3-4, written as loops over (query i, key j), against the batched path."""
    torch.manual_seed(6)
    b, h, n, e, k_max = 2, 2, 5, 4, 2
    relative = RelativePositions(head_dim=e, max_relative_position=k_max)
    rel = relative(n, n)
    q, k, v = _random_qkv(b=b, h=h, n_q=n, n_k=n, e=e)
    out, weights = ScaledDotProductAttention()(q, k, v, need_weights=True, relative=rel)
    expected_out = torch.zeros_like(out)
    for bi in range(b):
        for hi in range(h):
            for i in range(n):
                a_k = [
                    relative.keys.weight[max(-k_max, min(k_max, j - i)) + k_max] for j in range(n)
                ]
                a_v = [
                    relative.values.weight[max(-k_max, min(k_max, j - i)) + k_max] for j in range(n)
                ]
                scores = torch.stack(
                    [q[bi, hi, i] @ (k[bi, hi, j] + a_k[j]) / math.sqrt(e) for j in range(n)]
                )
                alpha = scores.softmax(0)
                torch.testing.assert_close(weights[bi, hi, i], alpha)
                expected_out[bi, hi, i] = sum(alpha[j] * (v[bi, hi, j] + a_v[j]) for j in range(n))
    torch.testing.assert_close(out, expected_out, atol=1e-5, rtol=1e-5)


def test_relative_positions_of_one_step_are_the_last_row() -> None:
    torch.manual_seed(7)
    relative = RelativePositions(head_dim=3, max_relative_position=2)
    full, last = relative(6, 6), relative(1, 6)
    torch.testing.assert_close(last.keys, full.keys[-1:])
    torch.testing.assert_close(last.values, full.values[-1:])
    # clipping: every key more than 2 positions behind the query shares one embedding
    torch.testing.assert_close(full.keys[5, 0], full.keys[5, 3])


def test_zero_relative_embeddings_reduce_to_plain_attention() -> None:
    torch.manual_seed(8)
    q, k, v = _random_qkv()
    zeros = RelativeEmbeddings(keys=torch.zeros(5, 5, 4), values=torch.zeros(5, 5, 4))
    plain, _ = ScaledDotProductAttention()(q, k, v)
    with_rel, _ = ScaledDotProductAttention()(q, k, v, relative=zeros)
    torch.testing.assert_close(with_rel, plain, atol=1e-6, rtol=1e-5)
