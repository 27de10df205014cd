"""E5 scaled vs unscaled dot-product attention (Vaswani et al. 2017): roles by
model.attention.scale x d_k = model.d_model / model.heads.

The grid varies d_k by the head count at a fixed d_model (config.yaml beside this file:
d_model 256 with 16, 4 and 1 heads, d_k 16, 64 and 256), so the largest d_k is the
single-head model. The attention entropy at initialisation is a diagnostic of the
implementation (without the scaling a correct one saturates the softmax as d_k grows, with no
training involved), so it is a descriptive table, not a check: no run of a correct
implementation could make it fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from matplotlib.figure import Figure

from seq2seq_lab.report.aggregate import Role, Variant, mean_std
from seq2seq_lab.report.checks import (
    NOT_CONVERGED,
    as_number,
    config_flag,
    decided,
    difference_text,
    judged,
    missing_runs,
    pair_up,
)
from seq2seq_lab.report.evidence import Difference, difference
from seq2seq_lab.report.plots import KeyFn, LossCurves, line_colors, line_label, save
from seq2seq_lab.report.rules import BETTER, Claim
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import (
    LEARNING_SPEED,
    Check,
    Comparison,
    ExperimentSpec,
    Finding,
    QualityFloor,
    Table,
)

# Vaswani et al. give no number: their reason for the scaling ("the softmax saturates and
# gradients vanish" for large d_k) predicts a model that fails to train, far more than 2 BLEU
# below the scaled one; 2 BLEU is the smallest gap this suite calls clear (E1's GAIN).
GAIN = 2.0
# "Increasingly with d_k": the gap at the largest d_k above the gap at the smallest, by any
# amount the interval can tell from 0 (no paper gives a size).
GROWS = BETTER

EQUAL_UPDATES = (
    "compared at equal updates: a claim about trainability, so the unscaled model is not "
    "required to have converged; the scaled one must have"
)


def _e5_role(run: Run) -> Role:
    d_model = as_number(run.config_value("model.d_model"))
    heads = as_number(run.config_value("model.heads"))
    numeric = isinstance(d_model, float) and isinstance(heads, float) and heads > 0
    return {
        "scale": config_flag(run, "model.attention.scale"),
        "d_k": int(d_model // heads) if numeric else None,
    }


def run_entropy(run: Run) -> float | None:
    """A run's mean attention entropy (nats; mean over attention kinds of the mean over layers
    and heads) at initialisation, before any update (the diagnostics' "init" record)."""
    from seq2seq_lab.analysis.entropy import mean_entropy

    record = run.init_diagnostics() if run.finished else None
    entropy = (record or {}).get("entropy")
    return mean_std(mean_entropy(entropy).values()).mean if entropy else None


def _e5_pairs(c: Comparison) -> list[tuple[int, Variant | None, Variant | None]]:
    """(d_k, scaled, unscaled) in d_k order."""
    return [(dk, c.find(scale=True, d_k=dk), c.find(scale=False, d_k=dk)) for dk in c.values("d_k")]


def _heads(variants: list[Variant | None]) -> str:
    for variant in variants:
        for run in variant.runs if variant is not None else ():
            heads = run.config_value("model.heads")
            if heads is not None:
                return str(heads)
    return "—"


def entropy_rows(c: Comparison) -> tuple[list[str], list[list[str]]]:
    """One row per d_k: the entropy at init of the scaled and the unscaled model (mean ± sd
    over seeds)."""
    rows = []
    for dk, scaled, unscaled in _e5_pairs(c):
        figures = [
            mean_std(run_entropy(r) for r in v.runs) if v is not None else None
            for v in (scaled, unscaled)
        ]
        if all(f is None or f.mean is None for f in figures):
            continue
        cells = ["—" if f is None else f.format(3) for f in figures]
        rows.append([str(dk), _heads([scaled, unscaled]), *cells])
    header = ["d_k", "heads", "scaled (nats)", "unscaled (nats)"]
    return (header, rows) if rows else ([], [])


ENTROPY_TABLE = Table(
    "Attention entropy at initialisation",
    entropy_rows,
    note=(
        "Mean attention entropy (nats; over attention kinds, layers and heads, then mean ± sd "
        "over seeds) of the untrained network, before any update (diagnostics/validation.jsonl, "
        "the init record). d_k = d_model / heads: the grid varies d_k by the head count. A "
        "diagnostic of the implementation, not a check: without the 1/sqrt(d_k) scaling q.k "
        "has variance d_k, so a correct implementation's unscaled softmax is sharper (lower "
        "entropy) than the scaled one and sharper still as d_k grows, whatever training does."
    ),
)


def _e5_better_at_largest(c: Comparison) -> Finding:
    pairs = _e5_pairs(c)
    if not pairs:
        return missing_runs("scaled and unscaled runs at the largest d_k")
    dk, scaled, unscaled = pairs[-1]
    return judged(
        c,
        f"d_k {dk}: scaled - unscaled",
        unscaled,
        scaled,
        Claim("at least", GAIN),
        equal_updates=() if unscaled is None else (unscaled,),
    )


def gap_difference(
    large: Difference, small: Difference, dk_large: int, dk_small: int
) -> Difference:
    """``large.delta - small.delta`` as a Difference: the two gaps come from four different
    models, so the variance is the sum of the two differences' variances (each its seed term
    and its test-sentence term). The degrees of freedom of the seed term are the fewer of the
    two gaps', not Satterthwaite's larger ones: both gaps are measured on the same seeds, so
    their seed variances are not independent estimates, and counting those seeds twice would
    narrow the interval below either gap's own. Both gaps are scored on the same test
    sentences too; a sentence that is hard for both unscaled models moves both gaps alike, so
    adding the test terms errs on the wide side."""
    seed_var = large.seed_var + small.seed_var
    seed_df = min(large.seed_df, small.seed_df)
    measured = large.test_var is not None and small.test_var is not None
    paired = large.paired and small.paired

    def per_seed(d: Difference) -> tuple[float, ...]:
        # the gap seed by seed when paired; else the system's scores (only their count is read)
        if d.paired:
            return tuple(b - a for a, b in zip(d.baseline_scores, d.system_scores))
        return (
            d.system_scores if len(d.system_scores) <= len(d.baseline_scores) else d.baseline_scores
        )

    return Difference(
        baseline=f"gap at d_k {dk_small}",
        system=f"gap at d_k {dk_large}",
        measure=f"{large.measure} gap (scaled - unscaled), d_k {dk_large} minus d_k {dk_small}",
        baseline_scores=per_seed(small),
        system_scores=per_seed(large),
        paired=paired,
        delta=large.delta - small.delta,
        seed_var=seed_var,
        seed_df=seed_df,
        test_var=(large.test_var + small.test_var) if measured else None,
        sentences=(min(large.sentences or 0, small.sentences or 0) or None) if measured else None,
        sentence_level=large.sentence_level and small.sentence_level,
    )


def _e5_gap_grows(c: Comparison) -> Finding:
    pairs = _e5_pairs(c)
    needed = "scaled and unscaled runs at the smallest and the largest d_k"
    if len(pairs) < 2:
        return missing_runs(needed)
    (dk_small, scaled_small, unscaled_small), (dk_large, scaled_large, unscaled_large) = (
        pairs[0],
        pairs[-1],
    )
    if None in (scaled_small, unscaled_small, scaled_large, unscaled_large):
        return missing_runs(needed)
    small = difference(unscaled_small, scaled_small)
    large = difference(unscaled_large, scaled_large)
    if small is None or large is None:
        return missing_runs(f"scored runs of {needed}")
    d = gap_difference(large, small, dk_large, dk_small)
    text = f"gap (scaled - unscaled) at d_k {dk_large} - gap at d_k {dk_small}"
    detail = (
        f"{text} {difference_text(GROWS, d)}; gaps: d_k {dk_small} {small.delta:+.2f}, "
        f"d_k {dk_large} {large.delta:+.2f}"
    )
    still = c.unconverged([scaled_small, scaled_large])  # the unscaled ones: equal updates
    if still:
        alone = decided(GROWS, d, detail, text)
        return Finding(
            None,
            f"{detail} (interval alone: {alone.text()})",
            why=f"{NOT_CONVERGED}: " + ", ".join(still),
        )
    return decided(GROWS, d, detail, text)


@dataclass(frozen=True)
class EntropyVsDk:
    """Mean attention entropy (nats, over layers and heads) against d_k, one line per line
    key, one panel per attention kind; solid: at init (before any update), dashed: last
    validation (diagnostics/validation.jsonl), mean over the non-failed runs."""

    dk: KeyFn
    line: KeyFn | None = None
    name: str = "entropy_vs_dk"
    caption: str = "Attention entropy against d_k (solid: at init, dashed: last validation)"

    def draw(self, comparison: Comparison, out_dir: Path) -> list[Path]:
        from seq2seq_lab.analysis.entropy import mean_entropy

        # points[(label, when)][kind][d_k] -> entropies of the runs
        points: dict[tuple[str, str], dict[str, dict[float, list[float]]]] = {}
        for variant in comparison.variants:
            dk, label = self.dk(variant.role), line_label(variant, self.line)
            if dk is None:
                continue
            inits = [("at init", record) for record in variant.init_diagnostics()]
            lasts = [("last validation", records[-1]) for records in variant.diagnostics()]
            for when, record in inits + lasts:
                if not record.get("entropy"):
                    continue
                for kind, value in mean_entropy(record["entropy"]).items():
                    series = points.setdefault((label, when), {}).setdefault(kind, {})
                    series.setdefault(float(dk), []).append(value)
        if not points:
            return []
        kinds = list(dict.fromkeys(k for per in points.values() for k in per))
        colors = line_colors([label for label, _ in points])
        figure = Figure(figsize=(4.3 * len(kinds), 3.8), layout="constrained")
        axes = figure.subplots(1, len(kinds), squeeze=False)[0]
        for ax, kind in zip(axes, kinds):
            for (label, when), per_kind in points.items():
                series = per_kind.get(kind)
                if not series:
                    continue
                xs = sorted(series)
                ax.plot(
                    xs,
                    [mean_std(series[x]).mean for x in xs],
                    marker="o",
                    color=colors[label],
                    linestyle="-" if when == "at init" else "--",
                    label=f"{label} ({when})",
                )
            ax.set_xscale("log", base=2)
            ticks = sorted({x for per in points.values() for x in per.get(kind, {})})
            ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
            ax.minorticks_off()
            ax.set_xlabel("d_k = d_model / heads")
            ax.set_ylabel("entropy (nats)")
            ax.set_title(kind)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        return [save(figure, out_dir / f"{self.name}.png")]


SPEC = ExperimentSpec(
    name="e5_scaling",
    title="E5 scaled vs unscaled dot-product attention (Vaswani et al. 2017)",
    headline="unscaled fails at large d_k (no numbers)",
    published=(
        "No ablation numbers. Rationale: q.k has variance d_k, so unscaled scores saturate the "
        "softmax for large d_k and gradients vanish; additive attention beats unscaled dot "
        "product for large d_k."
    ),
    expected=(
        "Attention entropy at init much lower without scaling, falling as d_k grows (a "
        "diagnostic table); slower or worse training without scaling, increasingly with d_k."
    ),
    role=_e5_role,
    order=lambda r: (r.get("d_k") or 0, not r.get("scale")),
    checks=(
        Check(
            "at the largest d_k (d_k = d_model / heads, varied by the head count: the "
            f"single-head model) the scaled model is better than the unscaled one by at least "
            f"{GAIN:g} BLEU (95 % interval's lower end >= {GAIN:g}; Vaswani et al. give no "
            "number, but a saturated softmax whose gradients vanish predicts a failure to "
            f"train, far more than {GAIN:g} BLEU); {EQUAL_UPDATES}",
            _e5_better_at_largest,
            kind=LEARNING_SPEED,
            main=True,
        ),
        Check(
            "the BLEU gap (scaled - unscaled) is larger at the largest d_k than at the smallest "
            "(d_k varied by the head count at a fixed d_model): the difference of the two "
            "gaps has its 95 % interval above 0 (variance the sum of the two gaps' variances); "
            f"{EQUAL_UPDATES}",
            _e5_gap_grows,
            kind=LEARNING_SPEED,
        ),
    ),
    floor=QualityFloor(
        reference={"scale": True},
        bleu={"synthetic": 30.0, "synthetic_v2": 30.0, "multi30k": 20.0, "full": 25.0},
        text="the scaled model, at every d_k",
    ),
    contrasts=lambda c: [pair for _, s, u in _e5_pairs(c) for pair in pair_up(s, [u])],
    plots=(
        EntropyVsDk(
            dk=lambda r: r.get("d_k"), line=lambda r: "scaled" if r.get("scale") else "unscaled"
        ),
        LossCurves(
            line=lambda r: "scaled" if r.get("scale") else "unscaled",
            facet=lambda r: f"d_k {r.get('d_k')}",
        ),
    ),
    tables=(ENTROPY_TABLE,),
)
