"""Token-budget batching and collation."""

from __future__ import annotations

import random

import pytest
import torch

from seq2seq_lab.data.batch import Batch
from seq2seq_lab.data.batching import (
    EncodedPair,
    TokenBudgetBatchSampler,
    collate,
    source_batch,
)
from seq2seq_lab.data.specials import BOS_ID, EOS_ID, PAD_ID


def random_lengths(n: int, seed: int = 0) -> tuple[list[int], list[int]]:
    rng = random.Random(seed)
    src = [rng.randint(2, 60) for _ in range(n)]
    tgt = [max(2, s + rng.randint(-5, 5)) for s in src]
    return src, tgt


def sampler(shuffle: bool, seed: int = 0, max_tokens: int = 300, n: int = 500, **kw):
    src, tgt = random_lengths(n)
    return TokenBudgetBatchSampler(
        src_lengths=src, tgt_lengths=tgt, max_tokens=max_tokens, shuffle=shuffle, seed=seed, **kw
    )


@pytest.mark.parametrize("shuffle", [True, False])
def test_batches_respect_budget_and_cover_every_pair_once(shuffle):
    s = sampler(shuffle)
    batches = list(s)
    assert sorted(i for b in batches for i in b) == list(range(500))
    for b in batches:
        assert len(b) * max(int(s.lengths[i]) for i in b) <= 300
    assert len(s) == len(batches)
    # the budget is used: consecutive sorted pairs fill most of it
    padded = sum(len(b) * max(int(s.lengths[i]) for i in b) for b in batches)
    assert padded > 0.6 * 300 * len(batches)


def test_a_pair_longer_than_the_budget_gets_its_own_batch():
    s = TokenBudgetBatchSampler(
        src_lengths=[3, 50, 4], tgt_lengths=[3, 2, 60], max_tokens=20, shuffle=False
    )
    assert list(s) == [[2], [1], [0]]


def test_training_order_is_deterministic_per_seed_and_epoch():
    a, b = sampler(True, seed=1), sampler(True, seed=1)
    epoch0 = list(a)
    assert list(b) == epoch0
    a.set_epoch(1)
    b.set_epoch(1)
    assert list(a) == list(b) != epoch0
    a.set_epoch(0)
    assert list(a) == epoch0  # resuming at an epoch reproduces it
    assert list(sampler(True, seed=2)) != epoch0
    assert a.sampler is a  # Lightning calls batch_sampler.sampler.set_epoch(epoch)


def padding_efficiency(s: TokenBudgetBatchSampler) -> float:
    batches = list(s)
    real = sum(int(s.lengths[i]) for b in batches for i in b)
    return real / sum(len(b) * max(int(s.lengths[i]) for i in b) for b in batches)


def test_training_batches_are_length_homogeneous_but_shuffled():
    s = sampler(True, pool_factor=1000)  # one pool: fully sorted before the batch shuffle
    longest = [max(int(s.lengths[i]) for i in b) for b in s]
    assert longest != sorted(longest) and longest != sorted(longest, reverse=True)
    assert padding_efficiency(s) > 0.9
    assert padding_efficiency(sampler(True, pool_factor=1)) < padding_efficiency(s)


def test_data_parallel_ranks_get_disjoint_equal_shares():
    whole = list(sampler(True, seed=3))
    shards = [list(sampler(True, seed=3, num_replicas=3, rank=r)) for r in range(3)]
    assert len({len(s) for s in shards}) == 1 and len(shards[0]) == len(whole) // 3
    flat = [tuple(b) for s in shards for b in s]
    assert len(set(flat)) == len(flat) and set(flat) <= {tuple(b) for b in whole}
    assert list(sampler(False, num_replicas=3, rank=1)) == list(sampler(False))  # eval: whole


def test_evaluation_order_is_sorted_and_fixed():
    s = sampler(False)
    order = [i for b in s for i in b]
    assert [int(s.lengths[i]) for i in order] == sorted(s.lengths.tolist(), reverse=True)
    s.set_epoch(3)
    assert [i for b in s for i in b] == order


def test_collate_builds_the_batch_contract():
    batch = collate([EncodedPair(7, [10, 11, 12], [20]), EncodedPair(3, [13], [21, 22, 23])])
    assert isinstance(batch, Batch)
    assert batch.src.tolist() == [[10, 11, 12, EOS_ID], [13, EOS_ID, PAD_ID, PAD_ID]]
    assert batch.src_mask.tolist() == [[True] * 4, [True, True, False, False]]
    assert batch.tgt_in.tolist() == [[BOS_ID, 20, PAD_ID, PAD_ID], [BOS_ID, 21, 22, 23]]
    assert batch.tgt_out.tolist() == [[20, EOS_ID, PAD_ID, PAD_ID], [21, 22, 23, EOS_ID]]
    assert batch.index.tolist() == [7, 3]
    assert batch.src.dtype == batch.tgt_in.dtype == torch.long
    assert batch.src_mask.dtype == torch.bool
    assert batch.num_tgt_tokens == 6


def test_source_batch_has_empty_targets():
    batch = source_batch([[5, 6], [7]])
    assert batch.src.tolist() == [[5, 6, EOS_ID], [7, EOS_ID, PAD_ID]]
    assert batch.tgt_in.tolist() == [[BOS_ID], [BOS_ID]]
    assert batch.tgt_out.tolist() == [[EOS_ID], [EOS_ID]]
    assert batch.index.tolist() == [0, 1]


def test_bad_budget():
    with pytest.raises(ValueError, match="data.max_tokens=0"):
        sampler(True, max_tokens=0)
