"""BatchState re-indexing: what beam search relies on to reorder any family's state, including
buffers written in place (``filled`` metadata)."""

import dataclasses

import torch

from seq2seq_lab.models.state import BatchState, Filled, expand_index


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


@dataclasses.dataclass
class Buffered(BatchState):
    """A preallocated [B, capacity] buffer of which the first ``length`` positions hold data."""

    buffer: torch.Tensor = dataclasses.field(metadata={"filled": Filled(dim=1, length="length")})
    length: int


def buffered() -> Buffered:
    # rows 0..3 hold 10*row + position at positions 0..2; positions 3, 4 are unwritten capacity
    data = torch.full((4, 5), -1)
    data[:, :3] = torch.arange(4)[:, None] * 10 + torch.arange(3)
    return Buffered(buffer=data, length=3)


def test_select_copies_the_filled_prefix_into_a_new_buffer_of_the_same_capacity():
    state = buffered()
    before = state.buffer.clone()
    selected = state.select(torch.tensor([2, 2, 0]))
    assert selected.buffer.shape == (3, 5) and selected.length == 3
    assert selected.buffer[:, :3].tolist() == [[20, 21, 22], [20, 21, 22], [0, 1, 2]]
    assert torch.equal(state.buffer, before)  # select leaves its state as it was


def test_reorder_beams_moves_the_filled_prefix_in_place():
    state = buffered()
    buffer = state.buffer
    # 0 and 1 swap, 2 stays, 3 continues row 2: a swap must not read an overwritten row
    reordered = state.reorder_beams(torch.tensor([1, 0, 2, 2]))
    assert reordered.buffer is buffer  # no new buffer: the state reordered from is consumed
    assert buffer[:, :3].tolist() == [[10, 11, 12], [0, 1, 2], [20, 21, 22], [20, 21, 22]]
    assert (buffer[:, 3:] == -1).all()  # the capacity past the filled prefix is not touched


def test_reorder_beams_with_no_moved_row_changes_nothing():
    state = buffered()
    before = state.buffer.clone()
    state.reorder_beams(torch.arange(4))
    assert torch.equal(state.buffer, before)
