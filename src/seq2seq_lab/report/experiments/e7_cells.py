"""E7 recurrent cell types (vanilla RNN vs GRU vs LSTM): roles by family x model.cell."""

from __future__ import annotations

from seq2seq_lab.report.aggregate import Role, Variant
from seq2seq_lab.report.experiments.common import (
    CLEAR,
    MIN_BUCKET_SENTENCES,
    SAME,
    bleu_text,
    drop_larger,
    family_order,
    lacks,
    pair_up,
    with_bleu,
)
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding

CELL_ORDER = {"rnn": 0, "gru": 1, "lstm": 2}


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
    found, details = [], []
    for family, rnn, gru, lstm in _e7_families(c):
        gated = with_bleu([gru, lstm])
        if not with_bleu([rnn]) or not gated:
            continue
        found.append(all(rnn.bleu <= g.bleu - CLEAR for g in gated))
        details.append(
            f"{family}: rnn {bleu_text(rnn.bleu)}, "
            + ", ".join(f"{g.role['cell']} {bleu_text(g.bleu)}" for g in gated)
        )
    if not found:
        return lacks("a vanilla RNN and a gated cell in one family")
    return Finding(all(found), "; ".join(details))


def _e7_rnn_long(c: Comparison) -> Finding:
    found, details = [], []
    for family, rnn, gru, lstm in _e7_families(c):
        gated = [v for v in (gru, lstm) if v is not None]
        finding = drop_larger(rnn, gated, "a vanilla RNN and a gated cell")
        if finding.holds is not None:
            found.append(finding.holds)
            details.append(f"{family}: {finding.detail}")
    if not found:
        return lacks(
            f"a vanilla RNN and a gated cell scored on a bucket of >= "
            f"{MIN_BUCKET_SENTENCES} long sentences"
        )
    return Finding(all(found), "; ".join(details))


def _e7_gru_lstm(c: Comparison) -> Finding:
    found, details = [], []
    for family, _, gru, lstm in _e7_families(c):
        if with_bleu([gru]) and with_bleu([lstm]):
            found.append(abs(gru.bleu - lstm.bleu) <= SAME)
            details.append(f"{family}: gru {bleu_text(gru.bleu)}, lstm {bleu_text(lstm.bleu)}")
    if not found:
        return lacks("GRU and LSTM in one family")
    return Finding(all(found), "; ".join(details))


E7 = ExperimentSpec(
    name="e7_cells",
    title="E7 recurrent cell types: vanilla RNN vs GRU vs LSTM",
    published=(
        "The papers motivate the LSTM by vanishing/exploding gradients in vanilla RNNs "
        "(no controlled BLEU comparison). Multi30k de-en peers: LSTM 13.76, GRU 20.61."
    ),
    expected="Vanilla RNN clearly worst, especially on long sentences; GRU ~= LSTM.",
    role=_e7_role,
    order=lambda r: (family_order(r), CELL_ORDER.get(r.get("cell"), 9)),
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
