"""E3 attention score functions and input feeding (Luong et al. 2015): roles by Luong
model.attention.score / .window and model.input_feeding, and Bahdanau model.attention.form."""

from __future__ import annotations

from seq2seq_lab.report.aggregate import Role, Variant
from seq2seq_lab.report.experiments.common import (
    SAME,
    SMALL,
    Pairs,
    bleu_text,
    config_flag,
    family_order,
    lacks,
    pair_up,
    rank,
    with_bleu,
)
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding


def _e3_role(run: Run) -> Role:
    family = run.family
    role: Role = {"family": family}
    if family == "luong":
        role["score"] = run.config_value("model.attention.score")
        role["window"] = run.config_value("model.attention.window")
        role["feeding"] = config_flag(run, "model.input_feeding")
    elif family == "bahdanau":
        role["form"] = run.config_value("model.attention.form")
    return role


def _luong(c: Comparison, score: str, feeding: bool = True) -> Variant | None:
    return c.find(family="luong", score=score, window="global", feeding=feeding)


def _e3_similar(c: Comparison) -> Finding:
    group = with_bleu(
        [_luong(c, "dot"), _luong(c, "general")]
        + [c.find(family="bahdanau", form=f) for f in ("concat", "separate", "feedforward")]
    )
    if len(group) < 2:
        return lacks("at least two of Luong dot/general and the additive forms")
    spread = max(v.bleu for v in group) - min(v.bleu for v in group)
    detail = ", ".join(f"{v.label} {bleu_text(v.bleu)}" for v in group) + f"; spread {spread:.2f}"
    return Finding(spread <= SAME, detail)


def _e3_location_worst(c: Comparison) -> Finding:
    location = _luong(c, "location")
    others = with_bleu(_luong(c, s) for s in ("dot", "general", "concat"))
    if not with_bleu([location]) or not others:
        return lacks("Luong location and another global Luong score")
    detail = f"location {bleu_text(location.bleu)}; " + ", ".join(
        f"{v.label} {bleu_text(v.bleu)}" for v in others
    )
    return Finding(all(location.bleu < v.bleu for v in others), detail)


def _e3_input_feeding(c: Comparison) -> Finding:
    fed, unfed = _luong(c, "general"), _luong(c, "general", feeding=False)
    if not with_bleu([fed]) or not with_bleu([unfed]):
        return lacks("Luong general with and without input feeding")
    gain = fed.bleu - unfed.bleu
    detail = f"with {bleu_text(fed.bleu)}, without {bleu_text(unfed.bleu)} ({gain:+.2f})"
    return Finding(gain >= SMALL, detail)


def _e3_contrasts(c: Comparison) -> Pairs:
    luong_general = _luong(c, "general")
    luong_others = [v for v in c.select(family="luong") if v is not luong_general]
    bahdanau = c.find(family="bahdanau", form="separate")
    return pair_up(luong_general, luong_others) + pair_up(
        bahdanau, [v for v in c.select(family="bahdanau") if v is not bahdanau]
    )


E3 = ExperimentSpec(
    name="e3_scores",
    title="E3 attention score functions and input feeding (Luong et al. 2015)",
    published=(
        "En-de newstest2014 (ppl / BLEU): global location 6.4/18.1, dot 6.1/18.6, general "
        "6.1/17.3; local-m general 6.2/18.6; local-p general 5.9/19.0 (best); concat trained "
        "worse (ppl 6.7). Input feeding: ppl 7.3 -> 6.4, BLEU +1.3."
    ),
    expected=(
        "Dot/general/additive within about 1 BLEU (>= 3 seeds, spread reported), "
        "location-only scoring worst, input feeding about +1."
    ),
    role=_e3_role,
    order=lambda r: (
        family_order(r),
        rank(r.get("score"), ("dot", "general", "concat", "location")),
        str(r.get("window")),
        not r.get("feeding", True),
        str(r.get("form")),
    ),
    checks=(
        Check(
            f"Luong dot, Luong general and Bahdanau's additive forms are within {SAME:g} BLEU "
            "of each other (max - min of the means)",
            _e3_similar,
        ),
        Check(
            "location-only scoring has the lowest mean BLEU among Luong's global scores",
            _e3_location_worst,
        ),
        Check(
            f"input feeding raises Luong general's mean BLEU by at least {SMALL:g}",
            _e3_input_feeding,
        ),
    ),
    partly="any",
    contrasts=_e3_contrasts,
    plots=(LossCurves(facet=lambda r: r.get("family")), BleuByLength()),
)
