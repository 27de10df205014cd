"""BatchState re-indexing: what beam search relies on to reorder any family's state."""

import dataclasses

import torch

from seq2seq_lab.models.state import BatchState, expand_index


@dataclasses.dataclass
class Inner(BatchState):
    cache: list


@dataclasses.dataclass
class Outer(BatchState):
    memory: torch.Tensor = dataclasses.field(metadata={"static": True})
    hidden: torch.Tensor = dataclasses.field(metadata={"batch_dim": 1})
    inner: Inner
    position: int
    optional: torch.Tensor | None = None


def make() -> Outer:
    return Outer(
        memory=torch.arange(3).view(3, 1).float(),
        hidden=torch.arange(6).view(2, 3).float(),  # (layers, B)
        inner=Inner(cache=[torch.arange(3), (torch.arange(3) * 10,)]),
        position=4,
    )


def test_expand_index():
    assert expand_index(2, 3).tolist() == [0, 0, 0, 1, 1, 1]


def test_select_indexes_every_tensor_along_its_batch_dim():
    state = make().select(torch.tensor([2, 0]))
    assert state.memory.view(-1).tolist() == [2, 0]
    assert state.hidden.tolist() == [[2, 0], [5, 3]]
    assert state.inner.cache[0].tolist() == [2, 0]
    assert state.inner.cache[1][0].tolist() == [20, 0]
    assert state.position == 4 and state.optional is None


def test_reorder_beams_leaves_static_fields():
    state = make().reorder_beams(torch.tensor([1, 1, 0]))
    assert state.memory.view(-1).tolist() == [0, 1, 2]
    assert state.hidden[0].tolist() == [1, 1, 0]
