"""E3 attention score functions and input feeding (Luong et al. 2015): roles by Luong
model.attention.score / .window and model.input_feeding, and Bahdanau model.attention.form;
checks: Luong's own score comparison, Bahdanau's two additive forms, the feed-forward scorer,
input feeding."""

from __future__ import annotations

from seq2seq_lab.report.aggregate import Role, Variant
from seq2seq_lab.report.checks import (
    ALIGNMENT_TABLE,
    Pairs,
    config_flag,
    every_case,
    family_order,
    judged,
    pair_up,
    rank,
)
from seq2seq_lab.report.evidence import recorded
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.rules import BETTER, WORSE, Claim
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding, QualityFloor

# Luong et al. Table 4 call dot and general "comparable" at 18.6 vs 17.3 BLEU: their own gap is
# 1.3, so "about equal" cannot mean less than that; 1.5 is that gap rounded up.
DOT_GENERAL = 1.5
# Bahdanau's concat v^T tanh(W[s;h]) and separate v^T tanh(W_s s + W_h h) are the same function
# (W = [W_s W_h]): any difference is training noise, and 1 BLEU is the smallest effect the
# other checks of the report call real.
ADDITIVE_FORMS = 1.0
# Luong et al.: location-only ppl 6.4 and concat 6.7 against dot and general at 6.1; the claim
# is only the direction (higher perplexity), so the margin is 0.
PPL_HIGHER = Claim("at least", 0.0)

TEST_PPL = recorded("test perplexity", lambda run: run.score("ppl"))


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


def _scaled(variants: list[Variant | None]) -> str:
    """What the runs of ``variants`` recorded as model.attention.scaled."""
    found = {
        str(r.config_value("model.attention.scaled", "not recorded")).lower()
        for v in variants
        if v is not None
        for r in v.runs
    }
    return "model.attention.scaled " + (", ".join(sorted(found)) or "not recorded")


def _e3_luong_scores(c: Comparison) -> Finding:
    dot, general, location = (_luong(c, s) for s in ("dot", "general", "location"))
    concat = _luong(c, "concat")
    cases = [
        judged(c, "dot - general", general, dot, Claim("within", DOT_GENERAL)),
        judged(c, "ppl location - dot", dot, location, PPL_HIGHER, measure=TEST_PPL),
        judged(c, "ppl location - general", general, location, PPL_HIGHER, measure=TEST_PPL),
    ]
    if concat is not None:
        cases.append(
            judged(c, "ppl concat - general", general, concat, PPL_HIGHER, measure=TEST_PPL)
        )
    return every_case(
        cases,
        "Luong dot, general and location (global, input feeding)",
        prefix=f"{_scaled([dot, general])}: ",
    )


def _e3_additive_forms(c: Comparison) -> Finding:
    concat = c.find(family="bahdanau", form="concat")
    separate = c.find(family="bahdanau", form="separate")
    return judged(c, "concat - separate", separate, concat, Claim("within", ADDITIVE_FORMS))


def _e3_feedforward(c: Comparison) -> Finding:
    separate = c.find(family="bahdanau", form="separate")
    feedforward = c.find(family="bahdanau", form="feedforward")
    return judged(c, "feedforward - separate", separate, feedforward, WORSE)


def _e3_input_feeding(c: Comparison) -> Finding:
    return judged(
        c,
        "general with - without input feeding",
        _luong(c, "general", feeding=False),
        _luong(c, "general"),
        BETTER,
    )


def _e3_contrasts(c: Comparison) -> Pairs:
    luong_general = _luong(c, "general")
    luong_others = [v for v in c.select(family="luong") if v is not luong_general]
    bahdanau = c.find(family="bahdanau", form="separate")
    return pair_up(luong_general, luong_others) + pair_up(
        bahdanau, [v for v in c.select(family="bahdanau") if v is not bahdanau]
    )


SPEC = ExperimentSpec(
    name="e3_scores",
    title="E3 attention score functions and input feeding (Luong et al. 2015)",
    headline="dot ≈ general (1.3 apart); location, concat: higher ppl",
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
            "Luong's own comparison inside Luong's model (global attention, input feeding; dot "
            "and general scores as configured, see the runs' model.attention.scaled): dot and "
            f"general about equal within ±{DOT_GENERAL:g} BLEU (90 % interval inside "
            f"±{DOT_GENERAL:g}, two one-sided tests at 0.05; the paper's own dot-general gap "
            "is 1.3), location-only trains worse than dot and than general in test perplexity "
            "(location's ppl higher, 95 % interval's lower end >= 0; paper 6.4 vs 6.1), and "
            "where a Luong concat variant ran, concat's ppl higher than general's (same rule; "
            "paper 6.7 vs 6.1)",
            _e3_luong_scores,
            main=True,
        ),
        Check(
            "Bahdanau's two additive forms, concat W[s;h] and separate W_s s + W_h h, are about "
            f"equal within ±{ADDITIVE_FORMS:g} BLEU (90 % interval inside ±{ADDITIVE_FORMS:g}, "
            "two one-sided tests at 0.05; the same function, so any gap is training noise)",
            _e3_additive_forms,
        ),
        Check(
            "the feed-forward scorer tanh(w·[s;h]) is worse than Bahdanau's separate additive "
            "form (95 % interval's upper end <= 0; it ranks the source positions the same for "
            "every query)",
            _e3_feedforward,
        ),
        Check(
            "input feeding makes Luong general better (95 % interval's lower end >= 0; paper "
            "+1.3 BLEU)",
            _e3_input_feeding,
        ),
    ),
    floor=QualityFloor(
        reference={"family": "luong", "score": "general", "window": "global", "feeding": True},
        bleu={"synthetic": 30.0, "synthetic_v2": 30.0, "multi30k": 25.0, "full": 25.0},
        text="Luong general with input feeding",
    ),
    contrasts=_e3_contrasts,
    plots=(LossCurves(facet=lambda r: r.get("family")), BleuByLength()),
    tables=(ALIGNMENT_TABLE,),
)
