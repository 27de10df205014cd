"""E2 source reversal (Sutskever et al. 2014): roles by family x model.reverse_source."""

from __future__ import annotations

from seq2seq_lab.report.aggregate import Role, Variant
from seq2seq_lab.report.checks import (
    ALIGNMENT_TABLE,
    MIN_BUCKET_SENTENCES,
    config_flag,
    every_case,
    family_order,
    judged,
    keeps_more,
    pair_up,
)
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.rules import Claim
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import (
    LEARNING_SPEED,
    Check,
    Comparison,
    ExperimentSpec,
    Finding,
    QualityFloor,
)

# The smaller of the two published gains, Luong et al.'s +1.3 BLEU (Sutskever et al.: +4.7),
# rounded down: a reversal that helps less than 1 BLEU does not reproduce either.
GAIN = 1.0
# With a bidirectional encoder the source order reaches the decoder both ways; "no change" is
# read as within the smallest published gain (Luong's +1.3), rounded down.
NO_CHANGE = 1.0


def _e2_role(run: Run) -> Role:
    return {"family": run.family, "reverse": config_flag(run, "model.reverse_source")}


def _e2_gain(c: Comparison, family: str) -> tuple[Variant | None, Variant | None]:
    return c.find(family=family, reverse=False), c.find(family=family, reverse=True)


def _e2_plain_gain(c: Comparison) -> Finding:
    forward, reversed_ = _e2_gain(c, "plain")
    return judged(
        c,
        "plain reversed - forward",
        forward,
        reversed_,
        Claim("at least", GAIN),
        equal_updates=[v for v in (forward, reversed_) if v is not None],
    )


def _e2_long_gain(c: Comparison) -> Finding:
    forward, reversed_ = _e2_gain(c, "plain")
    return keeps_more(
        c, forward, [reversed_] if reversed_ else [], 0.0, "plain seq2seq with and without reversal",
        equal_updates=[v for v in (forward, reversed_) if v is not None],
    )  # fmt: skip


def _e2_attention_flat(c: Comparison) -> Finding:
    claim = Claim("within", NO_CHANGE)
    cases = [
        judged(c, f"{f} reversed - forward", *_e2_gain(c, f), claim)
        for f in c.values("family")
        if f != "plain"
    ]
    return every_case(cases, "an attention model with and without reversal")


SPEC = ExperimentSpec(
    name="e2_reversal",
    title="E2 source reversal (Sutskever et al. 2014)",
    headline="reversed source +1.3 to +4.7 BLEU",
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
            f"reversal makes plain seq2seq better by at least {GAIN:g} BLEU (95 % interval's "
            f"lower end >= {GAIN:g}; Luong's +1.3, the smaller published gain, rounded down), "
            "at equal updates: plain seq2seq may still be rising at the comparison's budget",
            _e2_plain_gain,
            kind=LEARNING_SPEED,
            main=True,
        ),
        Check(
            "reversed plain seq2seq keeps a larger share of its short-sentence BLEU on the "
            f"longest length bucket (>= {MIN_BUCKET_SENTENCES} sentences) than without "
            "reversal: retention (BLEU longest / shortest bucket) higher, 95 % interval above 0, "
            "at equal updates as in (1)",
            _e2_long_gain,
            kind=LEARNING_SPEED,
        ),
        Check(
            "every attention model is about equal with and without reversal (90 % interval of "
            f"the difference inside ±{NO_CHANGE:g} BLEU, two one-sided tests at 0.05)",
            _e2_attention_flat,
        ),
    ),
    contrasts=lambda c: [
        pair
        for f in c.values("family")
        for pair in pair_up(c.find(family=f, reverse=False), [c.find(family=f, reverse=True)])
    ],
    floor=QualityFloor(
        reference={"family": "plain", "reverse": True},
        bleu={"synthetic": 10.0, "synthetic_v2": 8.0, "multi30k": 8.0, "full": 10.0},
        text="plain seq2seq with the source reversed",
    ),
    plots=(BleuByLength(), LossCurves(facet=lambda r: r.get("family"))),
    tables=(ALIGNMENT_TABLE,),
)
