"""E6 positions, heads and FFN activation (Vaswani et al. 2017 Table 3; Shaw et al. 2018):
roles by model.positions, model.heads and model.ffn_activation, one factor changed at a time
around the base (sinusoidal, ReLU, the most common head count)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from seq2seq_lab.report.aggregate import Role, Variant
from seq2seq_lab.report.experiments.common import (
    CLEAR,
    SAME,
    SMALL,
    Pairs,
    bleu_text,
    lacks,
    pair_up,
    rank,
    with_bleu,
)
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding


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
    c: Comparison, change: dict, text: str, holds: Callable[[float, float], bool]
) -> Finding:
    base, other = _e6(c), _e6(c, **change)
    if not with_bleu([base]) or not with_bleu([other]):
        return lacks(f"the base model and {text}")
    detail = f"{other.label} {bleu_text(other.bleu)} vs {base.label} {bleu_text(base.bleu)}"
    return Finding(holds(other.bleu, base.bleu), detail)


def _e6_none_worst(c: Comparison) -> Finding:
    none, base = _e6(c, positions="none"), _e6(c)
    others = [v for v in with_bleu(c.variants) if v is not none]
    if not with_bleu([none]) or not with_bleu([base]):
        return lacks("the base model and a model without positions")
    lowest = all(none.bleu < v.bleu for v in others)
    detail = f"no positions {bleu_text(none.bleu)}, base {bleu_text(base.bleu)}; lowest: {lowest}"
    return Finding(lowest and none.bleu <= base.bleu - CLEAR, detail)


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
            f"the model without positions has the lowest mean BLEU, at least {CLEAR:g} below "
            "the base (sinusoidal, ReLU, the common head count)",
            _e6_none_worst,
        ),
        Check(
            f"learned positions are within {SAME:g} BLEU of sinusoidal",
            lambda c: _e6_compare(
                c, {"positions": "learned"}, "learned positions", lambda o, b: abs(o - b) <= SAME
            ),
            primary=False,
        ),
        Check(
            f"relative positions are at least sinusoidal's mean BLEU minus {SMALL:g}",
            lambda c: _e6_compare(
                c, {"positions": "relative"}, "relative positions", lambda o, b: o >= b - SMALL
            ),
            primary=False,
        ),
        Check(
            f"a single head is at least {SMALL:g} BLEU below the base",
            lambda c: _e6_compare(c, {"heads": 1}, "a single head", lambda o, b: o <= b - SMALL),
            primary=False,
        ),
        Check(
            f"SiLU is within {SAME:g} BLEU of ReLU",
            lambda c: _e6_compare(
                c, {"activation": "silu"}, "SiLU", lambda o, b: abs(o - b) <= SAME
            ),
            primary=False,
        ),
    ),
    contrasts=_e6_contrasts,
    plots=(LossCurves(), BleuByLength()),
)
