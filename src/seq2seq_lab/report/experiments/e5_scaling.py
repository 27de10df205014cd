"""E5 scaled vs unscaled dot-product attention (Vaswani et al. 2017): roles by
model.attention.scale x d_k = model.d_model / model.heads."""

from __future__ import annotations

from seq2seq_lab.report.aggregate import Role, Variant, mean_std
from seq2seq_lab.report.evidence import Difference
from seq2seq_lab.report.experiments.common import (
    CLEAR,
    as_number,
    config_flag,
    every,
    lacks,
    monotone,
    pair_up,
    tested,
)
from seq2seq_lab.report.plots import EntropyVsDk, LossCurves
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding, QualityFloor


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
    cases = []
    for dk, scaled, unscaled in _e5_pairs(c):
        s, u = (None if v is None else init_entropy(v) for v in (scaled, unscaled))
        if s is None or u is None:
            lacking = " and ".join(n for n, e in (("scaled", s), ("unscaled", u)) if e is None)
            cases.append((None, f"d_k {dk}: entropy of the {lacking} model"))
        else:
            cases.append((u < s, f"d_k {dk}: scaled {s:.3f}, unscaled {u:.3f}"))
    missing = "attention entropy at init (diagnostics/validation.jsonl) with and without scaling"
    return every(cases, missing, "entropy (nats): ")


def _e5_entropy_falls(c: Comparison) -> Finding:
    points = [(dk, None if u is None else init_entropy(u)) for dk, _, u in _e5_pairs(c)]
    if len(points) < 2:
        return lacks("unscaled attention entropy at two values of d_k")
    lacking = [f"d_k {dk}" for dk, e in points if e is None]
    if lacking:
        return Finding(None, "unscaled entropy missing at " + ", ".join(lacking))
    falls, broken = monotone([(f"d_k {dk}", e) for dk, e in points], rising=False)
    detail = "unscaled: " + ", ".join(f"d_k {dk} {e:.3f}" for dk, e in points)
    return Finding(falls, detail + (f"; does not fall at {', '.join(broken)}" if broken else ""))


def _e5_differences(c: Comparison) -> list[tuple[int, Difference | None]]:
    """scaled - unscaled at each d_k, in d_k order."""
    return [(dk, tested(u, s)) for dk, s, u in _e5_pairs(c)]


def _e5_worse_at_largest(c: Comparison) -> Finding:
    found = _e5_differences(c)
    if not found or found[-1][1] is None:
        return lacks("scaled and unscaled runs at the largest d_k")
    dk, d = found[-1]
    return Finding(d.clearly_better(CLEAR), f"d_k {dk}: scaled - unscaled {d.text()}")


def _e5_gap_grows(c: Comparison) -> Finding:
    found = _e5_differences(c)
    if len(found) < 2:
        return lacks("scaled and unscaled runs at two values of d_k")
    lacking = [f"d_k {dk}" for dk, d in found if d is None]
    if lacking:
        return Finding(None, "scaled and unscaled runs missing at " + ", ".join(lacking))
    grows, broken = monotone([(f"d_k {dk}", d.delta) for dk, d in found], rising=True)
    detail = "scaled - unscaled: " + ", ".join(f"d_k {dk} {d.delta:+.2f}" for dk, d in found)
    return Finding(grows, detail + (f"; does not grow at {', '.join(broken)}" if broken else ""))


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
            "the unscaled model's entropy at init falls at every step up in d_k",
            _e5_entropy_falls,
        ),
        Check(
            "at the largest d_k the scaled model is clearly better than the unscaled one (at "
            f"least {CLEAR:g} BLEU, significant at 0.05)",
            _e5_worse_at_largest,
            main=True,
        ),
        Check(
            "the BLEU gap (scaled - unscaled) grows at every step up in d_k",
            _e5_gap_grows,
        ),
    ),
    floor=QualityFloor(
        reference={"scale": True},
        bleu={"cpu": 30.0, "real_cpu": 20.0, "full": 25.0},
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
)
