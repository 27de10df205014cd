"""E1 attention vs no attention (Bahdanau et al. 2014; Luong et al. 2015): roles by model
family; checks: attention gain, the Transformer on top, length degradation of plain seq2seq."""

from __future__ import annotations

from seq2seq_lab.report.experiments.common import (
    CLEAR,
    MIN_BUCKET_SENTENCES,
    bleu_text,
    drop_larger,
    family_order,
    family_role,
    lacks,
    pair_up,
    with_bleu,
)
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding


def _e1_attention_gain(c: Comparison) -> Finding:
    plain = c.find(family="seq2seq")
    attention = with_bleu(v for v in c.variants if v.role["family"] not in ("seq2seq", None))
    if plain is None or plain.bleu is None or not attention:
        return lacks("plain seq2seq and at least one attention model with a BLEU")
    detail = f"seq2seq {bleu_text(plain.bleu)}; " + ", ".join(
        f"{v.label} {bleu_text(v.bleu)} ({v.bleu - plain.bleu:+.2f})" for v in attention
    )
    return Finding(all(v.bleu >= plain.bleu + CLEAR for v in attention), detail)


def _e1_transformer_best(c: Comparison) -> Finding:
    transformer = c.find(family="transformer")
    scored = with_bleu(c.variants)
    if transformer is None or transformer.bleu is None or len(scored) < 2:
        return lacks("a Transformer and another model with a BLEU")
    best = max(scored, key=lambda v: v.bleu)
    detail = f"best: {best.label} {bleu_text(best.bleu)}; Transformer {bleu_text(transformer.bleu)}"
    return Finding(best is transformer, detail)


def _e1_length(c: Comparison) -> Finding:
    plain = c.find(family="seq2seq")
    attention = [v for v in c.variants if v.role["family"] not in ("seq2seq", None)]
    return drop_larger(plain, attention, "plain seq2seq and an attention model")


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
            f"every attention model's mean BLEU is at least {CLEAR:g} above plain seq2seq's",
            _e1_attention_gain,
        ),
        Check("the Transformer has the highest mean BLEU", _e1_transformer_best, primary=False),
        Check(
            "plain seq2seq loses more BLEU from its overall score to the longest length bucket "
            f"(>= {MIN_BUCKET_SENTENCES} sentences) than every attention model",
            _e1_length,
            primary=False,
        ),
    ),
    contrasts=lambda c: pair_up(
        c.find(family="seq2seq"), [v for v in c.variants if v.role["family"] != "seq2seq"]
    ),
    plots=(BleuByLength(), LossCurves()),
)
