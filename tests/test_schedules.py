"""Each learning-rate schedule follows its formula, and the module applies it step by step."""

import math

import pytest
import torch
from config_values import schedule_settings

from seq2seq_lab.errors import ConfigError
from seq2seq_lab.optim.schedules import Constant, InverseSqrt, Noam, WarmupDecay, lambda_scheduler

CLASSES = {
    "constant": Constant,
    "inverse_sqrt": InverseSqrt,
    "noam": Noam,
    "warmup_decay": WarmupDecay,
}


def schedule(name: str, **overrides):
    """conf/schedule/<name>.yaml's schedule with ``overrides`` (the values under test)."""
    return CLASSES[name](**schedule_settings(name, **overrides))


def test_constant():
    assert [schedule("constant").lr(s, 3e-4) for s in (1, 10, 10_000)] == [3e-4] * 3


def test_inverse_sqrt_warmup_then_decay():
    sched = schedule("inverse_sqrt", warmup_steps=100)
    assert sched.lr(1, 1e-3) == pytest.approx(1e-5)
    assert sched.lr(50, 1e-3) == pytest.approx(5e-4)
    assert sched.lr(100, 1e-3) == pytest.approx(1e-3)  # peak at the end of warmup
    assert sched.lr(400, 1e-3) == pytest.approx(1e-3 * math.sqrt(100 / 400))
    assert schedule("inverse_sqrt", warmup_steps=0).lr(4, 1e-3) == pytest.approx(5e-4)


def test_inverse_sqrt_without_its_warmup_keeps_the_decay():
    warm, flat = (
        schedule("inverse_sqrt", warmup_steps=100),
        schedule("inverse_sqrt", warmup_steps=100, linear_warmup=False),
    )
    assert [flat.lr(s, 1e-3) for s in (1, 50, 99)] == pytest.approx([1e-3] * 3)
    assert [flat.lr(s, 1e-3) for s in (100, 400)] == pytest.approx(
        [warm.lr(s, 1e-3) for s in (100, 400)]
    )


def test_noam_matches_vaswani_eq3():
    sched = schedule("noam", d_model=512, warmup_steps=4000)
    for step in (1, 100, 3999, 4000, 4001, 20_000):
        expected = 512**-0.5 * min(step**-0.5, step * 4000**-1.5)
        assert sched.lr(step, base_lr=123.0) == pytest.approx(expected)
    peak = max(range(1, 10_000, 7), key=lambda s: sched.lr(s, 1.0))
    assert abs(peak - 4000) <= 7
    with pytest.raises(ConfigError, match="warmup_steps"):
        schedule("noam", warmup_steps=0)


@pytest.mark.parametrize("decay", ["linear", "cosine"])
def test_warmup_decay(decay):
    sched = schedule("warmup_decay", warmup_steps=10, decay=decay, min_ratio=0.1)
    assert sched.lr(5, 1.0, total_steps=110) == pytest.approx(0.5)
    assert sched.lr(10, 1.0, total_steps=110) == pytest.approx(1.0)
    assert sched.lr(60, 1.0, total_steps=110) == pytest.approx(0.55)  # both: halfway
    assert sched.lr(110, 1.0, total_steps=110) == pytest.approx(0.1)
    assert sched.lr(500, 1.0, total_steps=110) == pytest.approx(0.1)
    with pytest.raises(ConfigError, match="schedule.decay"):
        schedule("warmup_decay", decay="exponential")


def test_negative_warmup_is_a_config_error():
    with pytest.raises(ConfigError, match="schedule.warmup_steps"):
        schedule("inverse_sqrt", warmup_steps=-1)


def test_lambda_scheduler_counts_updates_from_one():
    """Update k (1-based) gets the formula's lr at step k, for every parameter group."""
    params = [torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))]
    opt = torch.optim.SGD([{"params": params[:1], "lr": 2.0}, {"params": params[1:], "lr": 0.5}])
    sched = lambda_scheduler(opt, schedule("inverse_sqrt", warmup_steps=4))
    seen = []
    for _ in range(6):
        seen.append([g["lr"] for g in opt.param_groups])
        opt.step()
        sched.step()
    for group, base in enumerate((2.0, 0.5)):
        expected = [schedule("inverse_sqrt", warmup_steps=4).lr(k, base) for k in range(1, 7)]
        assert [lrs[group] for lrs in seen] == pytest.approx(expected)
