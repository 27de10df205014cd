"""E4 post-LN vs pre-LN, with and without warmup (Xiong et al. 2020; Liu et al. 2020; Nguyen &
Salazar 2019): roles by model.norm x warmup (read from the schedule) x optim.lr x depth."""

from __future__ import annotations

from seq2seq_lab.report.aggregate import Role
from seq2seq_lab.report.experiments.common import (
    SAME,
    as_number,
    bleu_text,
    every,
    lacks,
    pair_up,
    with_bleu,
)
from seq2seq_lab.report.plots import GradNormsAtInit, LayerSimilarity, LossCurves
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding


def has_warmup(run: Run) -> bool | None:
    """Whether the run's schedule warms the learning rate up: no for Constant, for
    ``linear_warmup: false`` (peak held instead of ramped) and for 0 warmup steps."""
    target = run.config_value("schedule._target_")
    if target is None:
        return None
    if str(target).endswith("Constant"):
        return False
    if run.config_value("schedule.linear_warmup") is False:
        return False
    return bool(run.config_value("schedule.warmup_steps", 0))


def _e4_role(run: Run) -> Role:
    return {
        "norm": run.config_value("model.norm"),
        "warmup": has_warmup(run),
        "lr": as_number(run.config_value("optim.lr")),
        "layers": run.config_value("model.encoder_layers"),
    }


def _e4_settings(c: Comparison) -> list[tuple[float, int]]:
    return [(lr, layers) for lr in c.values("lr") for layers in c.values("layers")]


def _e4_post_fails(c: Comparison) -> Finding:
    if not c.values("lr") or not c.values("layers"):
        return lacks("runs with optim.lr and model.encoder_layers")
    lr, layers = max(c.values("lr")), max(c.values("layers"))
    post = c.find(norm="post", warmup=False, lr=lr, layers=layers)
    pre = c.find(norm="pre", warmup=False, lr=lr, layers=layers)
    if not with_bleu([post]):
        return lacks(f"post-LN without warmup at lr {lr:g}, {layers} layers")
    where = f"lr {lr:g}, {layers} layers, no warmup: "
    if post.diverged_fraction > 0:
        return Finding(True, where + f"post-LN {post.status_text()} (BLEU {bleu_text(post.bleu)})")
    if not with_bleu([pre]):
        return lacks(f"pre-LN without warmup at lr {lr:g}, {layers} layers (none diverged)")
    detail = (
        where + f"post-LN {bleu_text(post.bleu)} vs pre-LN {bleu_text(pre.bleu)}, none diverged"
    )
    return Finding(post.bleu < 0.5 * pre.bleu, detail)


def _e4_scored_pairs(c: Comparison, first: Role, second: Role):
    """(lr, layers, first variant, second variant) at every lr and depth where both have a
    BLEU for the rules."""
    for lr, layers in _e4_settings(c):
        a, b = (c.find(**role, lr=lr, layers=layers) for role in (first, second))
        if with_bleu([a]) and with_bleu([b]):
            yield lr, layers, a, b


def _e4_pre_needs_no_warmup(c: Comparison) -> Finding:
    pre_cold, pre_warm = {"norm": "pre", "warmup": False}, {"norm": "pre", "warmup": True}
    cases = [
        (
            cold.diverged_fraction == 0 and cold.bleu >= warm.bleu - SAME,
            f"lr {lr:g} L{layers}: {bleu_text(cold.bleu)} vs {bleu_text(warm.bleu)}"
            + (" (diverged)" if cold.diverged_fraction else ""),
        )
        for lr, layers, cold, warm in _e4_scored_pairs(c, pre_cold, pre_warm)
    ]
    missing = "pre-LN with and without warmup at one lr and depth"
    return every(cases, missing, "pre-LN no warmup vs warmup: ")


def _e4_post_matches_pre(c: Comparison) -> Finding:
    post_warm, pre_warm = {"norm": "post", "warmup": True}, {"norm": "pre", "warmup": True}
    cases = [
        (
            abs(post.bleu - pre.bleu) <= SAME,
            f"lr {lr:g} L{layers}: {bleu_text(post.bleu)} vs {bleu_text(pre.bleu)}",
        )
        for lr, layers, post, pre in _e4_scored_pairs(c, post_warm, pre_warm)
    ]
    missing = "post-LN and pre-LN with warmup at one lr and depth"
    return every(cases, missing, "with warmup, post-LN vs pre-LN: ")


def _e4_depth(c: Comparison) -> Finding:
    depths = c.values("layers")
    if len(depths) < 2 or not c.values("lr"):
        return lacks("two depths")
    lr = max(c.values("lr"))
    shallow = c.find(norm="post", warmup=False, lr=lr, layers=depths[0])
    deep = c.find(norm="post", warmup=False, lr=lr, layers=depths[-1])
    if not with_bleu([shallow]) or not with_bleu([deep]):
        return lacks(f"post-LN without warmup at lr {lr:g} at {depths[0]} and {depths[-1]} layers")
    worse = deep.bleu < shallow.bleu or deep.diverged_fraction > shallow.diverged_fraction
    detail = (
        f"post-LN no warmup, lr {lr:g}: L{depths[0]} {bleu_text(shallow.bleu)} "
        f"({shallow.status_text()}), L{depths[-1]} {bleu_text(deep.bleu)} ({deep.status_text()})"
    )
    return Finding(worse, detail)


def _e4_line(role: Role) -> str:
    return f"{role.get('norm')}-LN, {'warmup' if role.get('warmup') else 'no warmup'}"


E4 = ExperimentSpec(
    name="e4_norm_warmup",
    title="E4 post-LN vs pre-LN, with and without warmup (Xiong et al. 2020; Liu et al. 2020)",
    published=(
        "IWSLT14 de-en, 6+6 layers: post-LN without warmup 8.45, with 4000-step warmup ~34; "
        "500-step warmup 31.16 at lr 5e-4 but 2.77 at lr 1e-3. Pre-LN without warmup ~34, "
        "faster. With warmup post-LN ~= pre-LN (35.64 vs 35.50). Post-LN fails more with depth "
        "(Nguyen & Salazar: no-warmup post-LN 18.3 at 4 layers, fails at 5-6). At init the FFN "
        "gradient norm grows toward the output under post-LN and is flat under pre-LN."
    ),
    expected=(
        "Post-LN + no warmup + high lr diverging or stalled and worse with depth; pre-LN + no "
        "warmup ~= pre-LN + warmup; post-LN + warmup ~= pre-LN; per-layer gradient-norm "
        "profiles at init; a layer-similarity plot. Diverged runs are results."
    ),
    role=_e4_role,
    order=lambda r: (
        str(r.get("norm")),
        not r.get("warmup"),
        r.get("lr") or 0.0,
        r.get("layers") or 0,
    ),
    checks=(
        Check(
            "post-LN without warmup at the highest lr and greatest depth fails: a run "
            "diverged, or its mean BLEU is below half of pre-LN's in the same setting",
            _e4_post_fails,
        ),
        Check(
            "pre-LN trains without warmup: at every lr and depth none of its runs diverged "
            f"and its mean BLEU is at least pre-LN-with-warmup's minus {SAME:g}",
            _e4_pre_needs_no_warmup,
        ),
        Check(
            f"with warmup, post-LN and pre-LN are within {SAME:g} BLEU at every lr and depth",
            _e4_post_matches_pre,
            primary=False,
        ),
        Check(
            "post-LN without warmup at the highest lr gets worse with depth: lower mean BLEU or "
            "more diverged runs at the greatest depth than at the smallest",
            _e4_depth,
            primary=False,
        ),
    ),
    contrasts=lambda c: [
        pair
        for warmup in (True, False)
        for lr, layers in _e4_settings(c)
        for pair in pair_up(
            c.find(norm="pre", warmup=warmup, lr=lr, layers=layers),
            [c.find(norm="post", warmup=warmup, lr=lr, layers=layers)],
        )
    ],
    plots=(
        LossCurves(line=_e4_line, facet=lambda r: f"lr {r.get('lr')}, {r.get('layers')} layers"),
        GradNormsAtInit(
            line=lambda r: f"{r.get('norm')}-LN", figure=lambda r: f"{r.get('layers')} layers"
        ),
        LayerSimilarity(line=lambda r: f"{r.get('norm')}-LN, {r.get('layers')} layers"),
    ),
)
