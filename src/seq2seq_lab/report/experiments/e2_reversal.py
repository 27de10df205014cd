"""E2 source reversal (Sutskever et al. 2014): roles by family x model.reverse_source."""

from __future__ import annotations

from seq2seq_lab.report.aggregate import Role, Variant
from seq2seq_lab.report.experiments.common import (
    MIN_BUCKET_SENTENCES,
    SAME,
    bleu_text,
    config_flag,
    family_order,
    lacks,
    longest_bucket,
    pair_up,
    with_bleu,
)
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding


def _e2_role(run: Run) -> Role:
    return {"family": run.family, "reverse": config_flag(run, "model.reverse_source")}


def _e2_gain(c: Comparison, family: str) -> tuple[Variant | None, Variant | None]:
    return c.find(family=family, reverse=False), c.find(family=family, reverse=True)


def _e2_plain_gain(c: Comparison) -> Finding:
    forward, reversed_ = _e2_gain(c, "seq2seq")
    if not with_bleu([forward]) or not with_bleu([reversed_]):
        return lacks("plain seq2seq with and without reversal")
    gain = reversed_.bleu - forward.bleu
    detail = f"seq2seq forward {bleu_text(forward.bleu)}, reversed {bleu_text(reversed_.bleu)} ({gain:+.2f})"
    return Finding(gain >= SAME, detail)


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
    pairs = [_e2_gain(c, f) for f in c.values("family") if f != "seq2seq"]
    pairs = [(f, r) for f, r in pairs if with_bleu([f]) and with_bleu([r])]
    if not pairs:
        return lacks("an attention model with and without reversal")
    changes = {f.role["family"]: r.bleu - f.bleu for f, r in pairs}
    detail = ", ".join(f"{k} {v:+.2f}" for k, v in changes.items())
    return Finding(all(abs(v) <= SAME for v in changes.values()), detail)


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
        Check(f"reversal raises plain seq2seq's mean BLEU by at least {SAME:g}", _e2_plain_gain),
        Check(
            "plain seq2seq gains more from reversal on the longest length bucket "
            f"(>= {MIN_BUCKET_SENTENCES} sentences) than overall",
            _e2_long_gain,
            primary=False,
        ),
        Check(
            f"every attention model's mean BLEU changes by at most {SAME:g} with reversal",
            _e2_attention_flat,
            primary=False,
        ),
    ),
    contrasts=lambda c: [
        pair
        for f in c.values("family")
        for pair in pair_up(c.find(family=f, reverse=False), [c.find(family=f, reverse=True)])
    ],
    plots=(BleuByLength(), LossCurves(facet=lambda r: r.get("family"))),
)
