"""E2 source reversal (Sutskever et al. 2014): roles by family x model.reverse_source."""

from __future__ import annotations

from seq2seq_lab.report.aggregate import Role, Variant
from seq2seq_lab.report.experiments.common import (
    ALIGNMENT_TABLE,
    CLEAR,
    MIN_BUCKET_SENTENCES,
    SAME,
    compared,
    config_flag,
    every,
    family_order,
    lacks,
    longest_bucket,
    pair_up,
    tested,
)
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding, QualityFloor


def _e2_role(run: Run) -> Role:
    return {"family": run.family, "reverse": config_flag(run, "model.reverse_source")}


def _e2_gain(c: Comparison, family: str) -> tuple[Variant | None, Variant | None]:
    return c.find(family=family, reverse=False), c.find(family=family, reverse=True)


def _e2_plain_gain(c: Comparison) -> Finding:
    d = tested(*_e2_gain(c, "seq2seq"))
    if d is None:
        return lacks("plain seq2seq with and without reversal")
    return Finding(d.clearly_better(CLEAR), f"seq2seq reversed - forward {d.text()}")


def _e2_long_gain(c: Comparison) -> Finding:
    forward, reversed_ = _e2_gain(c, "seq2seq")
    if forward is None or reversed_ is None:
        return lacks("plain seq2seq with and without reversal")
    bucket = longest_bucket([forward, reversed_])
    if bucket is None:
        return lacks(f"a length bucket with >= {MIN_BUCKET_SENTENCES} sentences")
    overall = [v.scores("bleu").mean for v in (forward, reversed_)]
    long = [v.bleu_by_length()[bucket].mean for v in (forward, reversed_)]
    if None in overall or None in long:
        return lacks("test BLEU of both")
    gain_all, gain_long = overall[1] - overall[0], long[1] - long[0]
    detail = f"gain overall {gain_all:+.2f}, on bucket {bucket} {gain_long:+.2f}"
    return Finding(gain_long > gain_all, detail)


def _e2_attention_flat(c: Comparison) -> Finding:
    cases = [
        compared(f"{f} reversed - forward", *_e2_gain(c, f), lambda d: d.about_equal(SAME))
        for f in c.values("family")
        if f != "seq2seq"
    ]
    return every(cases, "an attention model with and without reversal")


E2 = ExperimentSpec(
    name="e2_reversal",
    title="E2 source reversal (Sutskever et al. 2014)",
    published=(
        "Test perplexity 5.8 -> 4.7 and BLEU 25.9 -> 30.6 with the source reversed (single "
        "LSTM, beam 12: 26.17 vs 30.59); Luong en-de +1.3 BLEU (11.3 -> 12.6). Reversed models "
        "are better on long sentences."
    ),
    expected=(
        "A clear gain for plain seq2seq (larger on long sentences); about no change for "
        "attention models with a bidirectional encoder."
    ),
    role=_e2_role,
    order=lambda r: (family_order(r), bool(r.get("reverse"))),
    checks=(
        Check(
            f"reversal makes plain seq2seq clearly better (at least {CLEAR:g} BLEU, significant "
            "at 0.05)",
            _e2_plain_gain,
            main=True,
        ),
        Check(
            "plain seq2seq gains more from reversal on the longest length bucket "
            f"(>= {MIN_BUCKET_SENTENCES} sentences) than overall (means over seeds)",
            _e2_long_gain,
        ),
        Check(
            "every attention model is about equal with and without reversal (the 95 % "
            f"interval of the difference inside ±{SAME:g} BLEU)",
            _e2_attention_flat,
        ),
    ),
    contrasts=lambda c: [
        pair
        for f in c.values("family")
        for pair in pair_up(c.find(family=f, reverse=False), [c.find(family=f, reverse=True)])
    ],
    floor=QualityFloor(
        reference={"family": "seq2seq", "reverse": True},
        bleu={"cpu": 10.0, "real_cpu": 8.0, "full": 10.0},
        text="plain seq2seq with the source reversed",
    ),
    plots=(BleuByLength(), LossCurves(facet=lambda r: r.get("family"))),
    tables=(ALIGNMENT_TABLE,),
)
