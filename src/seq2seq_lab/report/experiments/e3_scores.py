"""E3 attention score functions and input feeding (Luong et al. 2015): roles by Luong
model.attention.score / .window and model.input_feeding, and Bahdanau model.attention.form."""

from __future__ import annotations

from seq2seq_lab.report.aggregate import Role, Variant
from seq2seq_lab.report.experiments.common import (
    ALIGNMENT_TABLE,
    SAME,
    SMALL,
    Pairs,
    compared,
    config_flag,
    every,
    family_order,
    lacks,
    pair_up,
    rank,
    tested,
)
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding, QualityFloor


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
    base = _luong(c, "general")
    others = [_luong(c, "dot")] + [
        c.find(family="bahdanau", form=f) for f in ("concat", "separate", "feedforward")
    ]
    others = [v for v in others if v is not None]
    if base is None or not others:
        return lacks("Luong general and another of Luong dot and the additive forms")
    cases = [
        compared(f"{o.label} - {base.label}", base, o, lambda d: d.about_equal(SAME))
        for o in others
    ]
    return every(cases, "Luong general and another score")


def _e3_location_worst(c: Comparison) -> Finding:
    location = _luong(c, "location")
    others = [v for v in (_luong(c, s) for s in ("dot", "general", "concat")) if v is not None]
    if location is None or not others:
        return lacks("Luong location and another global Luong score")
    cases = [compared(f"location - {o.label}", o, location, lambda d: d.worse()) for o in others]
    return every(cases, "Luong location and another global Luong score")


def _e3_input_feeding(c: Comparison) -> Finding:
    d = tested(_luong(c, "general", feeding=False), _luong(c, "general"))
    if d is None:
        return lacks("Luong general with and without input feeding")
    return Finding(d.better() and d.delta >= SMALL, f"with - without feeding {d.text()}")


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
            "Luong dot and Bahdanau's additive forms are each about equal to Luong general "
            f"(the 95 % interval of the difference inside ±{SAME:g} BLEU)",
            _e3_similar,
            main=True,
        ),
        Check(
            "location-only scoring is worse than every other global Luong score "
            "(significant at 0.05)",
            _e3_location_worst,
        ),
        Check(
            f"input feeding makes Luong general better by at least {SMALL:g} BLEU "
            "(significant at 0.05)",
            _e3_input_feeding,
        ),
    ),
    floor=QualityFloor(
        reference={"family": "luong", "score": "general", "window": "global", "feeding": True},
        bleu={"cpu": 30.0, "real_cpu": 25.0, "full": 25.0},
        text="Luong general with input feeding",
    ),
    contrasts=_e3_contrasts,
    plots=(LossCurves(facet=lambda r: r.get("family")), BleuByLength()),
    tables=(ALIGNMENT_TABLE,),
)
