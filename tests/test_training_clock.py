"""Work that is not training (checkpoint writes, diagnostics) is left out of every training
clock: callbacks/clock.py, and ThroughputMonitor's step and loop clocks around it."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from seq2seq_lab.callbacks.clock import off_the_training_clock
from seq2seq_lab.callbacks.throughput import ThroughputMonitor


class Clock:
    def __init__(self) -> None:
        self.left_out: list[float] = []

    def leave_out_of_clock(self, seconds: float) -> None:
        self.left_out.append(seconds)


def test_every_clock_is_told_how_long_the_block_took():
    clocks = [Clock(), Clock()]
    trainer = SimpleNamespace(callbacks=[clocks[0], object(), clocks[1]])
    with off_the_training_clock(trainer):
        time.sleep(0.05)
    assert [len(c.left_out) for c in clocks] == [1, 1]
    assert clocks[0].left_out == clocks[1].left_out
    assert 0.05 <= clocks[0].left_out[0] < 5


def test_a_block_that_raises_is_left_out_too():
    clock = Clock()
    with pytest.raises(RuntimeError), off_the_training_clock(SimpleNamespace(callbacks=[clock])):
        raise RuntimeError("boom")
    assert len(clock.left_out) == 1


def test_the_throughput_step_clock_excludes_the_block():
    """A step with 0.2 s of diagnostics inside it counts only its own time."""
    monitor = ThroughputMonitor(log_every_n_steps=1)
    trainer = SimpleNamespace(callbacks=[monitor], global_step=1, log_every_n_steps=1)
    module = SimpleNamespace(log=lambda *args, **kwargs: None)
    batch = SimpleNamespace(num_tgt_tokens=100)
    monitor.on_train_epoch_start(trainer, module)
    monitor.on_train_batch_start(trainer, module, batch, 0)
    with off_the_training_clock(trainer):
        time.sleep(0.2)
    monitor.on_train_batch_end(trainer, module, None, batch, 0)
    assert monitor.step_seconds < 0.1
    assert monitor.loop_seconds < 0.1
    assert monitor.tokens == 100
