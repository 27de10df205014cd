"""E6 positions, heads and FFN activation (Vaswani et al. 2017 Table 3; Shaw et al. 2018):
roles by model.positions, model.heads and model.ffn_activation, one factor changed at a time
around the base (sinusoidal, ReLU, the most common head count)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from seq2seq_lab.report.aggregate import Role, Variant
from seq2seq_lab.report.evidence import Difference
from seq2seq_lab.report.experiments.common import (
    CLEAR,
    SAME,
    SMALL,
    Pairs,
    compared,
    every,
    lacks,
    pair_up,
    rank,
    tested,
)
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding, QualityFloor


def _e6_role(run: Run) -> Role:
    return {
        "positions": run.config_value("model.positions"),
        "heads": run.config_value("model.heads"),
        "activation": run.config_value("model.ffn_activation"),
    }


def _e6_base_heads(c: Comparison) -> Any:
    """The head count most variants share (one factor is changed at a time around it)."""
    heads = [v.role.get("heads") for v in c.variants if v.role.get("heads") is not None]
    return max(set(heads), key=heads.count) if heads else None


def _e6(c: Comparison, **change: Any) -> Variant | None:
    role = {"positions": "sinusoidal", "heads": _e6_base_heads(c), "activation": "relu"}
    return c.find(**{**role, **change})


def _e6_compare(
    c: Comparison, change: dict, text: str, holds: Callable[[Difference], bool]
) -> Finding:
    d = tested(_e6(c), _e6(c, **change))
    if d is None:
        return lacks(f"the base model and {text}")
    return Finding(holds(d), f"{text} - base {d.text()}")


def _e6_none_worst(c: Comparison) -> Finding:
    none = _e6(c, positions="none")
    others = [v for v in c.variants if v is not none]
    if none is None or not others:
        return lacks("a model without positions and another model")
    cases = [
        compared(f"{o.label} - no positions", none, o, lambda d: d.clearly_better(CLEAR))
        for o in others
    ]
    return every(cases, "a model without positions and another model")


def _e6_contrasts(c: Comparison) -> Pairs:
    base = _e6(c)
    return pair_up(base, c.variants)


E6 = ExperimentSpec(
    name="e6_positions_heads",
    title="E6 positions, heads and FFN activation (Vaswani et al. 2017 Table 3; Shaw et al. 2018)",
    published=(
        "Newstest2013 dev (ppl/BLEU, base 4.92/25.8): 1 head 5.29/24.9, 4 heads 5.00/25.5, 16 "
        "heads 4.91/25.8; learned positions 4.92/25.7 (~= sinusoidal); relative positions +1.3 "
        "(en-de) / +0.3 (en-fr) over absolute. No position information breaks word order."
    ),
    expected=(
        "No positions clearly worst; sinusoidal ~= learned; relative >= sinusoidal by a little; "
        "a single head about 1 BLEU below multi-head; SiLU ~= ReLU."
    ),
    role=_e6_role,
    order=lambda r: (
        rank(r.get("positions"), ("sinusoidal", "learned", "relative", "none")),
        r.get("heads") or 0,
        str(r.get("activation")),
    ),
    checks=(
        Check(
            "every other model is clearly better than the model without positions (at least "
            f"{CLEAR:g} BLEU, significant at 0.05)",
            _e6_none_worst,
            main=True,
        ),
        Check(
            "learned positions are about equal to sinusoidal (95 % interval inside "
            f"±{SAME:g} BLEU)",
            lambda c: _e6_compare(
                c, {"positions": "learned"}, "learned", lambda d: d.about_equal(SAME)
            ),
        ),
        Check(
            f"relative positions are not worse than sinusoidal by more than {SMALL:g} BLEU "
            "(the 95 % interval's lower end above that)",
            lambda c: _e6_compare(
                c, {"positions": "relative"}, "relative", lambda d: d.low >= -SMALL
            ),
        ),
        Check(
            f"a single head is worse than the base by at least {SMALL:g} BLEU (significant "
            "at 0.05)",
            lambda c: _e6_compare(
                c, {"heads": 1}, "one head", lambda d: d.worse() and d.delta <= -SMALL
            ),
        ),
        Check(
            f"SiLU is about equal to ReLU (95 % interval inside ±{SAME:g} BLEU)",
            lambda c: _e6_compare(c, {"activation": "silu"}, "SiLU", lambda d: d.about_equal(SAME)),
        ),
    ),
    floor=QualityFloor(
        reference={"positions": "sinusoidal", "activation": "relu"},
        bleu={"cpu": 30.0, "real_cpu": 20.0, "full": 25.0},
        text="the sinusoidal ReLU models (the base, at every head count)",
    ),
    contrasts=_e6_contrasts,
    plots=(LossCurves(), BleuByLength()),
)
