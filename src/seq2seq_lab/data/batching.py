"""Token-budget batching and collation into :class:`~seq2seq_lab.data.batch.Batch`.

Shapes: B batch, S source length (EOS included), T target length + 1 (BOS/EOS shift).

Batches hold as many sentences as fit a budget of *padded* tokens, ``B * max(S, T) <=
max_tokens`` (the cost of a step grows with the padded size, not the sentence count), and
group sentences of similar length so little of that budget is padding. For training, the
order is random but reproducible: a permutation drawn from ``(seed, epoch)`` is cut into pools
of ``pool_factor`` batches, each pool is sorted by length and cut into batches, and the batches
are shuffled (the bucketing of torchtext's ``BucketIterator`` and fairseq). For evaluation the
whole split is sorted by length and served in that order.

Resuming: the training loader's place, ``(epoch, batches of that epoch served)``, is part of
every checkpoint (:class:`ResumableDataLoader`, which Lightning saves and restores through
``state_dict``/``load_state_dict``), so a run resumed in the middle of an epoch goes on with
the very batches the uninterrupted run would have seen next.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch

from seq2seq_lab.data.batch import Batch
from seq2seq_lab.data.specials import BOS_ID, EOS_ID, PAD_ID


class EncodedPair(NamedTuple):
    """One tokenised pair: ids without specials, and its line number in the split."""

    index: int
    src: list[int]
    tgt: list[int]


class EncodedPairs(torch.utils.data.Dataset[EncodedPair]):
    """A tokenised split, kept as id lists (tokenised once, at setup)."""

    def __init__(self, pairs: Sequence[EncodedPair]) -> None:
        self.pairs = list(pairs)

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, i: int) -> EncodedPair:
        return self.pairs[i]

    def src_lengths(self) -> list[int]:
        """S of each pair: its ids plus EOS."""
        return [len(p.src) + 1 for p in self.pairs]

    def tgt_lengths(self) -> list[int]:
        """T of each pair: its ids plus BOS (tgt_in) or EOS (tgt_out)."""
        return [len(p.tgt) + 1 for p in self.pairs]


def _pad(rows: Sequence[list[int]], width: int) -> torch.Tensor:
    return torch.tensor([row + [PAD_ID] * (width - len(row)) for row in rows], dtype=torch.long)


def collate(pairs: Sequence[EncodedPair]) -> Batch:
    """Pad a list of pairs into a :class:`Batch`: source ``x EOS``, decoder input ``BOS y``,
    decoder output ``y EOS``, right-padded with PAD_ID; the mask is True on real tokens."""
    src = [p.src + [EOS_ID] for p in pairs]
    tgt_in = [[BOS_ID] + p.tgt for p in pairs]
    tgt_out = [p.tgt + [EOS_ID] for p in pairs]
    src_t = _pad(src, max(map(len, src)))  # [B, S]
    width = max(map(len, tgt_in))  # T
    return Batch(
        src=src_t,
        src_mask=src_t != PAD_ID,  # PAD never occurs inside a sentence
        tgt_in=_pad(tgt_in, width),
        tgt_out=_pad(tgt_out, width),
        index=torch.tensor([p.index for p in pairs], dtype=torch.long),
    )


def source_batch(sources: Sequence[list[int]]) -> Batch:
    """A batch of sources only (translation of new text): targets are the empty sentence,
    ``tgt_in`` = [[BOS]] and ``tgt_out`` = [[EOS]] ([B, 1]); ``index`` is the list position."""
    return collate([EncodedPair(i, list(ids), []) for i, ids in enumerate(sources)])


class TokenBudgetBatchSampler(torch.utils.data.Sampler[list[int]]):
    """Yields lists of dataset indices whose padded size ``len * max(S, T)`` fits ``max_tokens``.

    ``shuffle=True`` (training): pools of about ``pool_factor`` batches of a random permutation
    drawn from ``(seed, epoch)`` are sorted by length and cut into batches, then all batches are
    shuffled; call :meth:`set_epoch` before each epoch (Lightning does, see :attr:`sampler`).
    ``shuffle=False`` (evaluation): the split sorted by length, longest first, so a budget
    problem shows up on the first batch.
    A single pair longer than ``max_tokens`` still gets a batch of its own (never dropped).

    Position: ``position`` counts the batches of the current epoch already served (the
    :class:`ResumableDataLoader` advances it as it hands batches out); ``state_dict`` is
    ``{"epoch", "position"}``, and after ``load_state_dict`` the next iteration starts at that
    batch of that epoch. Any other iteration starts at batch 0, and ``set_epoch`` to another
    epoch forgets the position.

    Data parallel training (DDP, with Lightning's ``use_distributed_sampler=False``): every
    rank builds the same shuffled batches and takes every ``num_replicas``-th one from
    ``rank``, all ranks the same number (the last few batches of an epoch may be skipped).
    ``num_replicas``/``rank`` default to the initialised process group, else 1/0. Evaluation
    batches are not split: each rank scores the whole split.
    """

    def __init__(
        self,
        *,
        src_lengths: Sequence[int],
        tgt_lengths: Sequence[int],
        max_tokens: int,
        shuffle: bool,
        seed: int = 0,
        pool_factor: int = 50,
        num_replicas: int | None = None,
        rank: int | None = None,
    ) -> None:
        if len(src_lengths) != len(tgt_lengths):
            raise ValueError("src_lengths and tgt_lengths must have the same length")
        if max_tokens < 1:
            raise ValueError(f"data.max_tokens={max_tokens}: expected a positive number")
        if pool_factor < 1:
            raise ValueError(f"data.pool_factor={pool_factor}: expected a positive number")
        self.lengths = np.maximum(np.asarray(src_lengths), np.asarray(tgt_lengths))
        self.max_tokens, self.shuffle = max_tokens, shuffle
        self.seed, self.pool_factor = seed, pool_factor
        distributed = torch.distributed.is_available() and torch.distributed.is_initialized()
        if num_replicas is None:
            num_replicas = torch.distributed.get_world_size() if distributed else 1
        if rank is None:
            rank = torch.distributed.get_rank() if distributed else 0
        if not 0 <= rank < num_replicas:
            raise ValueError(f"rank {rank} is not in [0, {num_replicas})")
        self.num_replicas, self.rank = num_replicas, rank
        self.epoch = 0
        self.position = 0  # batches of self.epoch served so far
        self._resume_at: int | None = None  # where the next iteration starts, once restored
        self._batches: list[list[int]] | None = None  # of self.epoch, built on first use

    @property
    def sampler(self) -> TokenBudgetBatchSampler:
        """Lightning calls ``set_epoch`` on ``dataloader.batch_sampler.sampler`` before every
        epoch (also when resuming), not on the batch sampler itself; this routes the call here."""
        return self

    def set_epoch(self, epoch: int) -> None:
        if epoch != self.epoch:
            self.epoch, self._batches = epoch, None
            self.position, self._resume_at = 0, None  # a restored position is of its epoch

    def state_dict(self) -> dict[str, int]:
        return {"epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self.set_epoch(int(state["epoch"]))
        self.position = self._resume_at = int(state["position"])

    def _pack(self, order: np.ndarray) -> list[list[int]]:
        """Cut ``order`` (already length-sorted) into consecutive budget-respecting batches."""
        batches: list[list[int]] = []
        current: list[int] = []
        longest = 0
        for i in order.tolist():
            n = int(self.lengths[i])
            if current and (len(current) + 1) * max(longest, n) > self.max_tokens:
                batches.append(current)
                current, longest = [], 0
            current.append(i)
            longest = max(longest, n)
        if current:
            batches.append(current)
        return batches

    def batches(self) -> list[list[int]]:
        """The batches of the current epoch, in the order they are served."""
        if self._batches is not None:
            return self._batches
        n = len(self.lengths)
        if n == 0:
            self._batches = []
            return self._batches
        if not self.shuffle:
            # longest first; ties by index (stable sort) so the order is fully determined
            order = np.argsort(-self.lengths, kind="stable")
            self._batches = self._pack(order)
            return self._batches
        rng = np.random.default_rng([self.seed, self.epoch])
        permutation = rng.permutation(n)
        per_batch = max(1, self.max_tokens // max(1, round(float(self.lengths.mean()))))
        pool = self.pool_factor * per_batch  # sentences per pool
        batches: list[list[int]] = []
        for start in range(0, n, pool):
            chunk = permutation[start : start + pool]
            # sorted by length within the pool; the random permutation breaks ties
            chunk = chunk[np.argsort(self.lengths[chunk], kind="stable")]
            batches += self._pack(chunk)
        batches = [batches[i] for i in rng.permutation(len(batches))]
        per_rank = len(batches) // self.num_replicas if self.num_replicas > 1 else len(batches)
        self._batches = batches[self.rank :: self.num_replicas][:per_rank]
        return self._batches

    def __iter__(self) -> Iterator[list[int]]:
        start = self._resume_at or 0
        self._resume_at, self.position = None, start
        yield from self.batches()[start:]

    def __len__(self) -> int:
        return len(self.batches())


class ResumableDataLoader(torch.utils.data.DataLoader):
    """A ``DataLoader`` over a :class:`TokenBudgetBatchSampler` whose place in the epoch is
    checkpointed.

    Lightning saves ``state_dict()`` of every training loader that has one in each checkpoint
    (``loops.fit_loop.state_dict.combined_loader``) and hands it back to ``load_state_dict``
    on resume, before the first batch (``Seq2SeqModule.on_train_start`` sees to it where
    Lightning would not, see there). The position is counted here, where batches reach the training loop,
    not in the sampler: with worker processes the sampler runs ahead of training.
    """

    def __iter__(self) -> Iterator[Any]:
        # A generator: the sampler is first read on the first next(), i.e. after Lightning's
        # set_epoch, even when worker processes would prefetch indices at iterator creation.
        sampler = self.batch_sampler
        for batch in super().__iter__():
            sampler.position += 1
            yield batch

    def state_dict(self) -> dict[str, int]:
        return self.batch_sampler.state_dict()

    def load_state_dict(self, state: dict[str, int]) -> None:
        self.batch_sampler.load_state_dict(state)
