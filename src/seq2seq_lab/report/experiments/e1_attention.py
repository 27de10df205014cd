"""E1 attention vs no attention (Bahdanau et al. 2014; Luong et al. 2015): roles by model
family; checks: attention gain, the Transformer on top, length degradation of plain seq2seq."""

from __future__ import annotations

from seq2seq_lab.report.aggregate import Variant
from seq2seq_lab.report.experiments.common import (
    ALIGNMENT_TABLE,
    CLEAR,
    MIN_BUCKET_SENTENCES,
    compared,
    drop_larger,
    every,
    family_order,
    family_role,
    lacks,
    pair_up,
)
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding, QualityFloor


def _attention_models(c: Comparison) -> list[Variant]:
    return [v for v in c.variants if v.role["family"] not in ("seq2seq", None)]


def _e1_attention_gain(c: Comparison) -> Finding:
    plain, attention = c.find(family="seq2seq"), _attention_models(c)
    if plain is None or not attention:
        return lacks("plain seq2seq and at least one attention model")
    cases = [
        compared(f"{m.label} - seq2seq", plain, m, lambda d: d.clearly_better(CLEAR))
        for m in attention
    ]
    return every(cases, "plain seq2seq and an attention model")


def _e1_transformer_best(c: Comparison) -> Finding:
    transformer = c.find(family="transformer")
    others = [v for v in c.variants if v is not transformer]
    if transformer is None or not others:
        return lacks("a Transformer and another model")
    cases = [
        compared(f"Transformer - {o.label}", o, transformer, lambda d: d.better()) for o in others
    ]
    return every(cases, "a Transformer and another model")


def _e1_length(c: Comparison) -> Finding:
    return drop_larger(
        c.find(family="seq2seq"), _attention_models(c), "plain seq2seq and an attention model"
    )


E1 = ExperimentSpec(
    name="e1_attention",
    title="E1 attention vs no attention (Bahdanau et al. 2014; Luong et al. 2015)",
    published=(
        "WMT14 en-fr: RNNencdec-30 13.93 vs RNNsearch-30 21.50; RNNencdec-50 17.82 vs "
        "RNNsearch-50 26.75. The encoder-decoder's BLEU drops sharply as sentences get longer; "
        "RNNsearch-50 does not deteriorate even beyond 50 words. Luong: global attention +2.8. "
        "Multi30k de-en peers: LSTM 13.76, Bahdanau 28.30, Transformer 36.52."
    ),
    expected=(
        "Attention RNNs several BLEU above plain seq2seq, the Transformer on top; BLEU by "
        "source length falling for plain seq2seq and flat for attention, including on "
        "sentences longer than any seen in training."
    ),
    role=family_role,
    order=family_order,
    checks=(
        Check(
            f"every attention model is clearly better than plain seq2seq (at least {CLEAR:g} "
            "BLEU, significant at 0.05)",
            _e1_attention_gain,
            main=True,
        ),
        Check(
            "the Transformer is better than every other model (significant at 0.05)",
            _e1_transformer_best,
        ),
        Check(
            f"plain seq2seq loses at least {CLEAR:g} BLEU more from its overall score to the "
            f"longest length bucket (>= {MIN_BUCKET_SENTENCES} sentences) than every attention "
            "model (means over seeds)",
            _e1_length,
        ),
    ),
    contrasts=lambda c: pair_up(
        c.find(family="seq2seq"), [v for v in c.variants if v.role["family"] != "seq2seq"]
    ),
    floor=QualityFloor(
        reference={"family": "bahdanau"},
        bleu={"cpu": 30.0, "real_cpu": 25.0, "full": 25.0},
        text="Bahdanau attention",
    ),
    plots=(BleuByLength(), LossCurves()),
    tables=(ALIGNMENT_TABLE,),
)
