"""E4 post-LN vs pre-LN, with and without warmup (Xiong et al. 2020; Liu et al. 2020; Nguyen &
Salazar 2019): roles by model.norm x warmup (read from the schedule) x optim.lr x depth; checks:
post-LN fails without warmup where pre-LN trains, pre-LN needs no warmup, the norms match with
warmup, post-LN worse with depth, gradient norms at initialisation, top-block similarity."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from matplotlib.figure import Figure

from seq2seq_lab.report.aggregate import Role, Variant, mean_std
from seq2seq_lab.report.checks import (
    NOT_CONVERGED,
    as_number,
    bleu_text,
    every_case,
    judged,
    missing_runs,
    pair_up,
)
from seq2seq_lab.report.evidence import Measure, recorded
from seq2seq_lab.report.plots import KeyFn, LossCurves, line_label, save, slug
from seq2seq_lab.report.rules import WORSE, Claim
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import (
    AT_INITIALISATION,
    LEARNING_SPEED,
    Check,
    Comparison,
    ExperimentSpec,
    Finding,
    QualityFloor,
)

# Xiong et al. 2020: post-LN without warmup 8.45 BLEU against ~34 for pre-LN (and for post-LN
# with warmup), a failure far larger than 2; 2 BLEU is the least that still says "fails where
# pre-LN trains" rather than "a little worse".
POST_FAILS = 2.0
# Xiong et al.: pre-LN without warmup reaches ~34, as with warmup; not worse by more than the
# 1 BLEU the other checks of the report call the smallest real effect.
NO_WARMUP_NEEDED = 1.0
# With warmup post-LN and pre-LN end level (Xiong et al. 35.64 vs 35.50, 5 seeds): "about
# equal" within the report's smallest real effect, 1 BLEU.
NORMS_EQUAL = 1.0
# Xiong et al. Fig. 3: at init the last decoder block's FFN gradient norm grows over the first's
# under post-LN and is flat or falling under pre-LN; the earlier rule asked post-LN >= 1.5 and
# pre-LN <= 1.2, a gap of 0.3 in the ratio (last block / first).
GROWTH_GAP = 0.3
# Liu et al. 2020: pre-LN's last blocks become near copies of each other; 0.05 in cosine
# similarity is the least gap read as "more alike" rather than "about the same".
COLLAPSE = 0.05


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


def _e4_pairs(
    c: Comparison, first: Role, second: Role
) -> Iterator[tuple[float, int, Variant | None, Variant | None]]:
    """(lr, layers, first variant or None, second variant or None) at every lr and depth."""
    for lr, layers in _e4_settings(c):
        yield lr, layers, *(c.find(**role, lr=lr, layers=layers) for role in (first, second))


def _with(finding: Finding, more: str) -> Finding:
    return Finding(finding.holds, finding.detail + more, finding.why)


# an undecided difference for these reasons leaves the floor nothing to say (an unconverged
# pre-LN may still reach it)
STOPS = (NOT_CONVERGED, "missing")


def _e4_post_fails(c: Comparison) -> Finding:
    if not c.values("lr") or not c.values("layers"):
        return missing_runs("runs with optim.lr and model.encoder_layers")
    lr, layers = max(c.values("lr")), max(c.values("layers"))
    post = _e4_setting(c, "post", False, lr, layers)
    pre = _e4_setting(c, "pre", False, lr, layers)
    where = f"lr {lr:g}, {layers} layers, no warmup, at equal updates: "
    # the stalled or diverged post-LN run is the finding: only pre-LN must have converged
    gap = judged(
        c, where + "pre - post", post, pre, Claim("at least", POST_FAILS), equal_updates=[post]
    )
    if pre is None or post is None or (gap.holds is None and gap.reason in STOPS):
        return gap
    gap = _with(gap, f" (post-LN {post.status_text()})")
    floor = c.floor_bleu({"norm": "pre", "warmup": True})
    if floor is None:
        return every_case([gap, missing_runs("a quality floor at the runs' scale")], "a floor")
    level = f"pre-LN {bleu_text(pre.bleu)}, the floor {floor:g}"
    if pre.bleu is None or pre.bleu < floor:
        # a stalled post-LN beside an untrained pre-LN shows nothing about norms, either way
        why = f"not trained enough: pre-LN without warmup {bleu_text(pre.bleu)} < {floor:g}"
        return Finding(None, f"{gap.detail}; {level}", why=why)
    return _with(gap, f"; {level}")


def _e4_pre_needs_no_warmup(c: Comparison) -> Finding:
    claim = Claim("not below", NO_WARMUP_NEEDED)
    cases = []
    for lr, layers, cold, warm in _e4_pairs(
        c, {"norm": "pre", "warmup": False}, {"norm": "pre", "warmup": True}
    ):
        where = f"lr {lr:g} L{layers}: "
        if cold is not None and cold.diverged_fraction:
            cases.append(Finding(False, where + f"without warmup {cold.status_text()}"))
        cases.append(judged(c, where + "without - with warmup", warm, cold, claim))
    return every_case(cases, "pre-LN with and without warmup at one lr and depth", "pre-LN: ")


def _e4_post_matches_pre(c: Comparison) -> Finding:
    claim = Claim("within", NORMS_EQUAL)
    warm = ({"norm": "post", "warmup": True}, {"norm": "pre", "warmup": True})
    cases = [
        judged(c, f"lr {lr:g} L{layers}: post - pre", pre, post, claim)
        for lr, layers, post, pre in _e4_pairs(c, *warm)
    ]
    return every_case(cases, "post-LN and pre-LN with warmup at one lr and depth", "with warmup: ")


def _e4_depth(c: Comparison) -> Finding:
    depths = c.values("layers")
    if len(depths) < 2 or not c.values("lr"):
        return missing_runs("two depths")
    lr = max(c.values("lr"))
    shallow = _e4_setting(c, "post", False, lr, depths[0])
    deep = _e4_setting(c, "post", False, lr, depths[-1])
    # a check of training stability at equal updates: neither side is held to convergence
    found = judged(
        c,
        f"post-LN no warmup, lr {lr:g}, at equal updates: L{depths[-1]} - L{depths[0]}",
        shallow,
        deep,
        WORSE,
        equal_updates=[v for v in (shallow, deep) if v is not None],
    )
    if shallow is None or deep is None:
        return found
    return _with(
        found, f" (L{depths[0]} {shallow.status_text()}, L{depths[-1]} {deep.status_text()})"
    )


def ffn_growth(profile: dict[str, float], stack: str) -> float | None:
    """||dL/dW_FFN|| of the stack's last block over its first, from a run's gradient norms at
    initialisation ({"decoder.0.ffn": norm, ...}); None with fewer than two blocks."""
    ffn = sorted(
        (int(key.split(".")[1]), norm)
        for key, norm in profile.items()
        if key.startswith(f"{stack}.") and key.endswith(".ffn")
    )
    return ffn[-1][1] / ffn[0][1] if len(ffn) > 1 and ffn[0][1] > 0 else None


def _run_growth(run: Run) -> float | None:
    profile = run.grad_norms_init()
    return ffn_growth(profile, "decoder") if profile else None


GROWTH = recorded("decoder FFN gradient-norm growth at init (last block / first)", _run_growth)


def _at_init(c: Comparison, norm: str, layers: int) -> Variant | None:
    """The variant whose runs stand for ``norm`` at ``layers`` at initialisation: lr and warmup
    leave the initialisation as it is (one seed's runs start alike), so the one with warmup at
    the highest lr (the reference's runs), else any with gradient norms recorded."""

    def preference(v: Variant) -> tuple[bool, float]:
        lr = v.role.get("lr")
        return v.role.get("warmup") is not True, -(lr if isinstance(lr, int | float) else 0.0)

    found = sorted(c.select(norm=norm, layers=layers), key=preference)
    recorded_here = [v for v in found if any(_run_growth(r) is not None for r in v.runs)]
    return (recorded_here or found or [None])[0]


def _e4_gradients_at_init(c: Comparison) -> Finding:
    if not c.values("layers"):
        return missing_runs("runs with model.encoder_layers")
    layers = max(c.values("layers"))
    post, pre = (_at_init(c, norm, layers) for norm in ("post", "pre"))
    # at initialisation: training plays no part, so neither side is held to convergence
    return judged(
        c,
        f"at initialisation, L{layers}: post - pre",
        pre,
        post,
        Claim("at least", GROWTH_GAP),
        measure=GROWTH,
        equal_updates=[v for v in (pre, post) if v is not None],
    )


def top_similarity(runs: list[Run], stack: str) -> list[float]:
    """Cosine similarity of the stack's last two blocks at each run's last validation."""
    found = []
    for run in runs:
        records = run.validation_diagnostics()
        values = (records[-1].get("similarity") or {}).get(stack) if records else None
        if values:
            found.append(float(values[-1]))
    return found


def _similarity(stack: str) -> Measure:
    def value(run: Run) -> float | None:
        found = top_similarity([run], stack)
        return found[0] if found else None

    return recorded(f"{stack} top-two-block similarity", value)


def _e4_collapse(c: Comparison) -> Finding:
    if not c.values("layers") or not c.values("lr"):
        return missing_runs("runs with optim.lr and model.encoder_layers")
    layers = max(c.values("layers"))
    claim = Claim("at least", COLLAPSE)
    cases = []
    for lr in c.values("lr"):
        post, pre = (_e4_setting(c, norm, True, lr, layers) for norm in ("post", "pre"))
        for stack in ("encoder", "decoder"):
            text = f"lr {lr:g} {stack}: pre - post"
            cases.append(judged(c, text, post, pre, claim, measure=_similarity(stack)))
    return every_case(
        cases,
        f"post-LN and pre-LN with warmup at {layers} layers",
        f"top two blocks' similarity, L{layers}, with warmup: ",
    )


def _e4_line(role: Role) -> str:
    return f"{role.get('norm')}-LN, {'warmup' if role.get('warmup') else 'no warmup'}"


@dataclass(frozen=True)
class GradNormsAtInit:
    """Per-sub-layer gradient norms at initialisation (diagnostics/grad_norms_init.json), one
    line per line key (the lowest-seed run that has the file), one figure per ``figure`` key;
    drawn by ``seq2seq_lab.analysis.gradients.plot_gradient_norms``."""

    line: KeyFn | None = None
    figure: KeyFn | None = None
    name: str = "grad_norms_init"
    caption: str = "Gradient norm of each block's weights at initialisation (log scale)"

    def draw(self, comparison: Comparison, out_dir: Path) -> list[Path]:
        from seq2seq_lab.analysis.gradients import plot_gradient_norms

        figures: dict[str, dict[str, dict[str, float]]] = {}
        for variant in comparison.variants:
            key = str(self.figure(variant.role)) if self.figure else ""
            label = line_label(variant, self.line)
            if label in figures.get(key, {}):
                continue  # the profile at init does not depend on lr or warmup: one is enough
            profile = next((p for r in variant.runs if (p := r.grad_norms_init())), None)
            if profile:
                figures.setdefault(key, {})[label] = profile
        paths = []
        for key, profiles in figures.items():
            name = f"{self.name}_{slug(key)}" if key else self.name
            title = f"gradient norms at initialisation{', ' + key if key else ''}"
            paths.append(plot_gradient_norms(profiles, out_dir / f"{name}.png", title=title))
        return paths


def mean_lists(lists: list[list[float]]) -> list[float] | None:
    """Element-wise mean of equally long lists (None if they differ in length or are none)."""
    if not lists or len({len(x) for x in lists}) != 1:
        return None
    return [mean_std(column).mean for column in zip(*lists)]  # type: ignore[misc]


@dataclass(frozen=True)
class LayerSimilarity:
    """Cosine similarity of consecutive blocks' outputs at the last validation
    (diagnostics/validation.jsonl), encoder and decoder panels, mean over the line's
    non-failed runs. Values near 1 in the top blocks: representation collapse."""

    line: KeyFn | None = None
    name: str = "layer_similarity"
    caption: str = "Cosine similarity of consecutive blocks' outputs, last validation"

    def draw(self, comparison: Comparison, out_dir: Path) -> list[Path]:
        collected: dict[str, dict[str, list[list[float]]]] = {}
        for variant in comparison.variants:
            label = line_label(variant, self.line)
            for records in variant.diagnostics():
                for stack, values in (records[-1].get("similarity") or {}).items():
                    collected.setdefault(label, {}).setdefault(stack, []).append(values)
        if not collected:
            return []
        stacks = list(dict.fromkeys(s for per in collected.values() for s in per))
        figure = Figure(figsize=(4.5 * len(stacks), 3.8), layout="constrained")
        axes = figure.subplots(1, len(stacks), squeeze=False)[0]
        for ax, stack in zip(axes, stacks):
            for label, per_stack in collected.items():
                mean = mean_lists(per_stack.get(stack, []))
                if mean:
                    ax.plot(range(len(mean)), mean, marker="o", label=label)
            longest = max((len(v) for p in collected.values() for v in p.get(stack, [])), default=0)
            ax.set_xticks(range(longest), [f"{i}-{i + 1}" for i in range(longest)])
            ax.set_xlabel("blocks")
            ax.set_ylabel("cosine similarity")
            ax.set_title(stack)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        return [save(figure, out_dir / f"{self.name}.png")]


SPEC = ExperimentSpec(
    name="e4_norm_warmup",
    title="E4 post-LN vs pre-LN, with and without warmup (Xiong et al. 2020; Liu et al. 2020)",
    headline="no warmup: post-LN 8.45 BLEU, pre-LN ~34",
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
            "at equal updates, without warmup at the highest lr and greatest depth: pre-LN "
            f"better than post-LN by at least {POST_FAILS:g} BLEU (95 % interval's lower end "
            f">= {POST_FAILS:g}; a diverged run counts 0; post-LN's stalled or diverged "
            "training is the finding, so only pre-LN must have converged); undecided while "
            "pre-LN there is below the quality floor (mean over seeds: not trained enough)",
            _e4_post_fails,
            kind=LEARNING_SPEED,
            main=True,
        ),
        Check(
            "pre-LN trains without warmup: at every lr and depth none of its runs without "
            f"warmup diverged, and it is not worse than with warmup by more than "
            f"{NO_WARMUP_NEEDED:g} BLEU (90 % interval's lower end >= -{NO_WARMUP_NEEDED:g}, "
            "one-sided test at 0.05; Xiong et al.: ~34 either way)",
            _e4_pre_needs_no_warmup,
        ),
        Check(
            "with warmup, post-LN and pre-LN are about equal within "
            f"±{NORMS_EQUAL:g} BLEU at every lr and depth (90 % interval inside "
            f"±{NORMS_EQUAL:g}, two one-sided tests at 0.05; published 35.64 vs 35.50)",
            _e4_post_matches_pre,
        ),
        Check(
            "at equal updates (a stability check: neither run is held to convergence), "
            "post-LN without warmup at the highest lr is worse at the greatest depth than at "
            "the smallest (95 % interval's upper end <= 0; a diverged run counts 0)",
            _e4_depth,
            kind=LEARNING_SPEED,
        ),
        Check(
            "at initialisation (no training, so no convergence gate), at the greatest depth, "
            "the decoder's FFN gradient-norm growth toward the output (last block / first) is "
            f"larger under post-LN than under pre-LN by at least {GROWTH_GAP:g} (95 % "
            f"interval's lower end >= {GROWTH_GAP:g}, paired by seed)",
            _e4_gradients_at_init,
            kind=AT_INITIALISATION,
        ),
        Check(
            "after training with warmup, at the greatest depth and every lr, pre-LN's last two "
            "blocks are more alike than post-LN's: cosine similarity of their outputs higher "
            f"by at least {COLLAPSE:g} in the encoder and the decoder (95 % interval's lower "
            f"end >= {COLLAPSE:g})",
            _e4_collapse,
        ),
    ),
    floor=QualityFloor(
        reference={"norm": "pre", "warmup": True},
        bleu={"synthetic": 30.0, "synthetic_v2": 30.0, "multi30k": 20.0, "full": 25.0},
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
