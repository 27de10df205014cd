"""E5 scaled vs unscaled dot-product attention (Vaswani et al. 2017): roles by
model.attention.scale x d_k = model.d_model / model.heads."""

from __future__ import annotations

from seq2seq_lab.report.aggregate import Role, Variant, mean_std
from seq2seq_lab.report.experiments.common import (
    as_number,
    config_flag,
    every,
    lacks,
    pair_up,
    with_bleu,
)
from seq2seq_lab.report.plots import EntropyVsDk, LossCurves
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding


def _e5_role(run: Run) -> Role:
    d_model = as_number(run.config_value("model.d_model"))
    heads = as_number(run.config_value("model.heads"))
    numeric = isinstance(d_model, float) and isinstance(heads, float) and heads > 0
    return {
        "scale": config_flag(run, "model.attention.scale"),
        "d_k": int(d_model // heads) if numeric else None,
    }


def init_entropy(variant: Variant) -> float | None:
    """Mean attention entropy (over kinds, layers and heads) at initialisation, before any
    update (the diagnostics' "init" record), mean over the variant's non-failed runs that
    recorded it."""
    from seq2seq_lab.analysis.entropy import mean_entropy

    inits = [record.get("entropy") for record in variant.init_diagnostics()]
    return mean_std(mean_std(mean_entropy(e).values()).mean for e in inits if e).mean


def _e5_pairs(c: Comparison) -> list[tuple[int, Variant | None, Variant | None]]:
    return [(dk, c.find(scale=True, d_k=dk), c.find(scale=False, d_k=dk)) for dk in c.values("d_k")]


def _e5_entropy_lower(c: Comparison) -> Finding:
    def cases():
        for dk, scaled, unscaled in _e5_pairs(c):
            if scaled is None or unscaled is None:
                continue
            s, u = init_entropy(scaled), init_entropy(unscaled)
            if s is not None and u is not None:
                yield u < s, f"d_k {dk}: scaled {s:.3f}, unscaled {u:.3f}"

    missing = "attention entropy at init (diagnostics/validation.jsonl) with and without scaling"
    return every(cases(), missing, "entropy (nats): ")


def _e5_entropy_falls(c: Comparison) -> Finding:
    points = [(dk, init_entropy(u)) for dk, _, u in _e5_pairs(c) if u is not None]
    points = [(dk, e) for dk, e in points if e is not None]
    if len(points) < 2:
        return lacks("unscaled attention entropy at two values of d_k")
    falls = all(b[1] < a[1] for a, b in zip(points, points[1:]))
    return Finding(falls, "unscaled: " + ", ".join(f"d_k {dk} {e:.3f}" for dk, e in points))


def _e5_gaps(c: Comparison) -> list[tuple[int, float]]:
    return [(dk, s.bleu - u.bleu) for dk, s, u in _e5_pairs(c) if with_bleu([s]) and with_bleu([u])]


def _e5_worse_at_largest(c: Comparison) -> Finding:
    gaps = _e5_gaps(c)
    if not gaps:
        return lacks("scaled and unscaled runs at one d_k")
    dk, gap = gaps[-1]
    return Finding(gap > 0, f"d_k {dk}: scaled - unscaled BLEU {gap:+.2f}")


def _e5_gap_grows(c: Comparison) -> Finding:
    gaps = _e5_gaps(c)
    if len(gaps) < 2:
        return lacks("scaled and unscaled runs at two values of d_k")
    detail = "scaled - unscaled BLEU: " + ", ".join(f"d_k {dk} {g:+.2f}" for dk, g in gaps)
    return Finding(gaps[-1][1] > gaps[0][1], detail)


E5 = ExperimentSpec(
    name="e5_scaling",
    title="E5 scaled vs unscaled dot-product attention (Vaswani et al. 2017)",
    published=(
        "No ablation numbers. Rationale: q.k has variance d_k, so unscaled scores saturate the "
        "softmax for large d_k and gradients vanish; additive attention beats unscaled dot "
        "product for large d_k."
    ),
    expected=(
        "Attention entropy at init much lower without scaling, falling as d_k grows; slower "
        "or worse training without scaling, increasingly with d_k."
    ),
    role=_e5_role,
    order=lambda r: (r.get("d_k") or 0, not r.get("scale")),
    checks=(
        Check(
            "at every d_k the unscaled model's mean attention entropy at init (before any "
            "update) is lower than the scaled model's",
            _e5_entropy_lower,
        ),
        Check(
            "the unscaled model's entropy at init falls as d_k grows",
            _e5_entropy_falls,
            primary=False,
        ),
        Check(
            "at the largest d_k the unscaled model's mean BLEU is below the scaled one's",
            _e5_worse_at_largest,
        ),
        Check(
            "the BLEU gap (scaled - unscaled) is larger at the largest d_k than at the smallest",
            _e5_gap_grows,
            primary=False,
        ),
    ),
    partly="any",
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
)
