"""E7 recurrent cell types (vanilla RNN vs GRU vs LSTM): roles by family x model.cell."""

from __future__ import annotations

from seq2seq_lab.report.aggregate import Role, Variant
from seq2seq_lab.report.experiments.common import (
    CLEAR,
    MIN_BUCKET_SENTENCES,
    SAME,
    bleu_text,
    drop_larger,
    every,
    family_order,
    pair_up,
    rank,
    with_bleu,
)
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding

CELLS = ("rnn", "gru", "lstm")  # table order


def _e7_role(run: Run) -> Role:
    return {"family": run.family, "cell": run.config_value("model.cell")}


def _e7_families(c: Comparison) -> list[tuple[str, Variant | None, Variant | None, Variant | None]]:
    return [
        (
            f,
            c.find(family=f, cell="rnn"),
            c.find(family=f, cell="gru"),
            c.find(family=f, cell="lstm"),
        )
        for f in c.values("family")
    ]


def _e7_rnn_worst(c: Comparison) -> Finding:
    cases = [
        (
            all(rnn.bleu <= g.bleu - CLEAR for g in gated),
            f"{family}: rnn {bleu_text(rnn.bleu)}, "
            + ", ".join(f"{g.role['cell']} {bleu_text(g.bleu)}" for g in gated),
        )
        for family, rnn, gru, lstm in _e7_families(c)
        if with_bleu([rnn]) and (gated := with_bleu([gru, lstm]))
    ]
    return every(cases, "a vanilla RNN and a gated cell in one family")


def _e7_rnn_long(c: Comparison) -> Finding:
    pair = "a vanilla RNN and a gated cell"
    findings = [
        (family, drop_larger(rnn, [v for v in (gru, lstm) if v is not None], pair))
        for family, rnn, gru, lstm in _e7_families(c)
    ]
    cases = [(f.holds, f"{family}: {f.detail}") for family, f in findings if f.holds is not None]
    return every(cases, f"{pair} scored on a bucket of >= {MIN_BUCKET_SENTENCES} long sentences")


def _e7_gru_lstm(c: Comparison) -> Finding:
    cases = [
        (
            abs(gru.bleu - lstm.bleu) <= SAME,
            f"{f}: gru {bleu_text(gru.bleu)}, lstm {bleu_text(lstm.bleu)}",
        )
        for f, _, gru, lstm in _e7_families(c)
        if with_bleu([gru]) and with_bleu([lstm])
    ]
    return every(cases, "GRU and LSTM in one family")


E7 = ExperimentSpec(
    name="e7_cells",
    title="E7 recurrent cell types: vanilla RNN vs GRU vs LSTM",
    published=(
        "The papers motivate the LSTM by vanishing/exploding gradients in vanilla RNNs "
        "(no controlled BLEU comparison). Multi30k de-en peers: LSTM 13.76, GRU 20.61."
    ),
    expected="Vanilla RNN clearly worst, especially on long sentences; GRU ~= LSTM.",
    role=_e7_role,
    order=lambda r: (family_order(r), rank(r.get("cell"), CELLS)),
    checks=(
        Check(
            f"in every family the vanilla RNN's mean BLEU is at least {CLEAR:g} below GRU's "
            "and LSTM's",
            _e7_rnn_worst,
        ),
        Check(
            "in every family the vanilla RNN loses more BLEU from its overall score to the "
            f"longest length bucket (>= {MIN_BUCKET_SENTENCES} sentences) than GRU and LSTM",
            _e7_rnn_long,
            primary=False,
        ),
        Check(
            f"in every family GRU and LSTM are within {SAME:g} BLEU", _e7_gru_lstm, primary=False
        ),
    ),
    contrasts=lambda c: [
        pair for _, rnn, gru, lstm in _e7_families(c) for pair in pair_up(lstm, [rnn, gru])
    ],
    plots=(BleuByLength(), LossCurves(facet=lambda r: r.get("family"))),
)
