"""E4 post-LN vs pre-LN, with and without warmup (Xiong et al. 2020; Liu et al. 2020; Nguyen &
Salazar 2019): roles by model.norm x warmup (read from the schedule) x optim.lr x depth."""

from __future__ import annotations

from typing import Any

from seq2seq_lab.report.aggregate import Role, mean_std
from seq2seq_lab.report.experiments.common import (
    CLEAR,
    SAME,
    as_number,
    bleu_text,
    compared,
    every,
    lacks,
    pair_up,
    tested,
)
from seq2seq_lab.report.plots import GradNormsAtInit, LayerSimilarity, LossCurves
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding, QualityFloor


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


def _e4_setting(c: Comparison, norm: str, warmup: bool, lr: float, layers: int):
    return c.find(norm=norm, warmup=warmup, lr=lr, layers=layers)


def _e4_post_fails(c: Comparison) -> Finding:
    if not c.values("lr") or not c.values("layers"):
        return lacks("runs with optim.lr and model.encoder_layers")
    lr, layers = max(c.values("lr")), max(c.values("layers"))
    post = _e4_setting(c, "post", False, lr, layers)
    pre = _e4_setting(c, "pre", False, lr, layers)
    where = f"lr {lr:g}, {layers} layers, no warmup: "
    d = tested(post, pre)
    if d is None:
        return lacks(f"post-LN and pre-LN without warmup at lr {lr:g}, {layers} layers")
    floor = c.floor_bleu()
    if floor is None or pre.bleu < floor:
        # a diverged post-LN run beside an untrained pre-LN one shows nothing about norms
        return Finding(None, where + f"pre-LN {bleu_text(pre.bleu)} is below the floor")
    detail = where + f"pre - post {d.text()}; post-LN {post.status_text()}"
    return Finding(d.clearly_better(CLEAR), detail)


def _e4_pairs(c: Comparison, first: Role, second: Role):
    """(lr, layers, first variant or None, second variant or None) at every lr and depth."""
    for lr, layers in _e4_settings(c):
        yield lr, layers, *(c.find(**role, lr=lr, layers=layers) for role in (first, second))


def _e4_pre_needs_no_warmup(c: Comparison) -> Finding:
    cases = []
    for lr, layers, cold, warm in _e4_pairs(
        c, {"norm": "pre", "warmup": False}, {"norm": "pre", "warmup": True}
    ):
        d = tested(warm, cold)
        where = f"lr {lr:g} L{layers}: "
        if d is None:
            cases.append((None, where + "pre-LN with and without warmup"))
            continue
        holds = cold.diverged_fraction == 0 and (d.about_equal(SAME) or d.better())
        diverged = f" ({cold.status_text()})" if cold.diverged_fraction else ""
        cases.append((holds, where + f"without - with warmup {d.text()}{diverged}"))
    return every(cases, "pre-LN with and without warmup at one lr and depth", "pre-LN: ")


def _e4_post_matches_pre(c: Comparison) -> Finding:
    warm = ({"norm": "post", "warmup": True}, {"norm": "pre", "warmup": True})
    cases = [
        compared(f"lr {lr:g} L{layers}: post - pre", pre, post, lambda d: d.about_equal(SAME))
        for lr, layers, post, pre in _e4_pairs(c, *warm)
    ]
    return every(cases, "post-LN and pre-LN with warmup at one lr and depth", "with warmup: ")


def _e4_depth(c: Comparison) -> Finding:
    depths = c.values("layers")
    if len(depths) < 2 or not c.values("lr"):
        return lacks("two depths")
    lr = max(c.values("lr"))
    shallow = _e4_setting(c, "post", False, lr, depths[0])
    deep = _e4_setting(c, "post", False, lr, depths[-1])
    d = tested(shallow, deep)
    if d is None:
        return lacks(f"post-LN without warmup at lr {lr:g} at {depths[0]} and {depths[-1]} layers")
    detail = (
        f"post-LN no warmup, lr {lr:g}: L{depths[-1]} - L{depths[0]} {d.text()} "
        f"(L{depths[0]} {shallow.status_text()}, L{depths[-1]} {deep.status_text()})"
    )
    return Finding(d.worse(), detail)


# The diagnostics' checks (comparisons.md E4): at initialisation the FFN gradient norm grows
# toward the output under post-LN and is flat under pre-LN (Xiong et al. 2020, Fig. 3); after
# training pre-LN's last blocks can collapse onto each other (Liu et al. 2020).
GROWS = 1.5  # post-LN: the last decoder block's FFN gradient norm at least this over the first's
FLAT = 1.2  # pre-LN: at most this (flat, or shrinking toward the output)
COLLAPSE = 0.05  # pre-LN's top pair of blocks more alike than post-LN's by at least this


def ffn_growth(profile: dict[str, float], stack: str) -> float | None:
    """||dL/dW_FFN|| of the stack's last block over its first, from a run's gradient norms at
    initialisation ({"decoder.0.ffn": norm, ...}); None with fewer than two blocks."""
    ffn = sorted(
        (int(key.split(".")[1]), norm)
        for key, norm in profile.items()
        if key.startswith(f"{stack}.") and key.endswith(".ffn")
    )
    return ffn[-1][1] / ffn[0][1] if len(ffn) > 1 and ffn[0][1] > 0 else None


def _at_depth(c: Comparison, norm: str, layers: int, **role: Any) -> list[Run]:
    """The finished runs of the variants with ``norm`` at ``layers`` (and ``role``), one per
    seed: lr and warmup leave the initialisation as it is, so one seed's runs start alike."""
    runs = [r for v in c.select(norm=norm, layers=layers, **role) for r in v.runs if r.finished]
    return list({r.seed: r for r in reversed(runs)}.values())


def _growths(runs: list[Run], stack: str) -> list[float]:
    return [g for r in runs if (p := r.grad_norms_init()) and (g := ffn_growth(p, stack))]


def _e4_gradients_at_init(c: Comparison) -> Finding:
    if not c.values("layers"):
        return lacks("runs with model.encoder_layers")
    layers = max(c.values("layers"))
    post, pre = (_at_depth(c, norm, layers) for norm in ("post", "pre"))
    growth = {n: _growths(runs, "decoder") for n, runs in (("post", post), ("pre", pre))}
    if not growth["post"] or not growth["pre"]:
        return lacks(f"gradient norms at initialisation of post-LN and pre-LN at {layers} layers")
    mean = {n: mean_std(g).mean for n, g in growth.items()}
    encoder = {
        n: mean_std(_growths(runs, "encoder")).format(2)
        for n, runs in (("post", post), ("pre", pre))
    }
    detail = (
        f"FFN gradient norm at init, last block / first, L{layers}: decoder post-LN "
        f"{mean_std(growth['post']).format(2)}, pre-LN {mean_std(growth['pre']).format(2)} "
        f"(encoder: post-LN {encoder['post']}, pre-LN {encoder['pre']})"
    )
    return Finding(bool(mean["post"] >= GROWS and mean["pre"] <= FLAT), detail)


def top_similarity(runs: list[Run], stack: str) -> list[float]:
    """Cosine similarity of the stack's last two blocks at each run's last validation."""
    found = []
    for run in runs:
        records = run.validation_diagnostics()
        values = (records[-1].get("similarity") or {}).get(stack) if records else None
        if values:
            found.append(float(values[-1]))
    return found


def _e4_collapse(c: Comparison) -> Finding:
    if not c.values("layers"):
        return lacks("runs with model.encoder_layers")
    layers = max(c.values("layers"))
    runs = {n: _at_depth(c, n, layers, warmup=True) for n in ("post", "pre")}
    cases, holds = [], True
    for stack in ("encoder", "decoder"):
        top = {n: top_similarity(r, stack) for n, r in runs.items()}
        if not top["post"] or not top["pre"]:
            return lacks(f"layer similarity of post-LN and pre-LN with warmup at {layers} layers")
        gap = mean_std(top["pre"]).mean - mean_std(top["post"]).mean
        holds &= bool(gap >= COLLAPSE)
        cases.append(
            f"{stack} pre-LN {mean_std(top['pre']).format(3)}, post-LN "
            f"{mean_std(top['post']).format(3)} ({gap:+.3f})"
        )
    return Finding(
        holds, f"top two blocks' similarity, L{layers}, with warmup: " + "; ".join(cases)
    )


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
            "without warmup at the highest lr and greatest depth, pre-LN is clearly better "
            f"than post-LN (at least {CLEAR:g} BLEU, significant at 0.05; a diverged run "
            "counts 0), and pre-LN there reaches the quality floor",
            _e4_post_fails,
            main=True,
        ),
        Check(
            "pre-LN trains without warmup: at every lr and depth none of its runs diverged "
            "and it is about equal to pre-LN with warmup (95 % interval inside "
            f"±{SAME:g} BLEU) or better (significant at 0.05)",
            _e4_pre_needs_no_warmup,
        ),
        Check(
            "with warmup, post-LN and pre-LN are about equal at every lr and depth (95 % "
            f"interval inside ±{SAME:g} BLEU)",
            _e4_post_matches_pre,
        ),
        Check(
            "post-LN without warmup at the highest lr is worse at the greatest depth than at "
            "the smallest (significant at 0.05; a diverged run counts 0)",
            _e4_depth,
        ),
        Check(
            "at initialisation, at the greatest depth, the decoder's FFN gradient norm grows "
            f"toward the output under post-LN (last block / first at least {GROWS:g}, mean "
            f"over runs) and not under pre-LN (at most {FLAT:g})",
            _e4_gradients_at_init,
        ),
        Check(
            "after training with warmup at the greatest depth, pre-LN's last two blocks are "
            "more alike than post-LN's (cosine similarity of their outputs higher by at least "
            f"{COLLAPSE:g} in the encoder and the decoder, mean over runs)",
            _e4_collapse,
        ),
    ),
    floor=QualityFloor(
        reference={"norm": "pre", "warmup": True},
        bleu={"cpu": 30.0, "real_cpu": 20.0, "full": 25.0},
        text="pre-LN with warmup, at every lr and depth",
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
