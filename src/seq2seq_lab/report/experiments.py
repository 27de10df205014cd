"""The seven comparisons of comparisons.md as report specs: the one place where a verdict
rule, the contrasts tested for significance and the plots of each experiment live.

Roles are read from each run's resolved config (``config.model.*``, ``config.schedule.*``,
``config.optim.lr``), never parsed from the variant string. Thresholds, in BLEU:

- CLEAR = 2.0: "clearly better / worse", "several BLEU";
- SAME = 1.0: "about the same", "~=";
- SMALL = 0.5: "a little", "about +1".

Adding an experiment is one more ``ExperimentSpec`` in ``SPECS``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from seq2seq_lab.report.aggregate import Role, Variant, bucket_key, mean_std
from seq2seq_lab.report.plots import (
    BleuByLength,
    EntropyVsDk,
    GradNormsAtInit,
    LayerSimilarity,
    LossCurves,
)
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding

CLEAR = 2.0
SAME = 1.0
SMALL = 0.5
MIN_BUCKET_SENTENCES = 10  # a length bucket needs this many test sentences to be compared

Pairs = list[tuple[Variant, Variant]]


# ---------------------------------------------------------------------------- shared helpers
def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _scored(variants: Iterable[Variant | None]) -> list[Variant]:
    return [v for v in variants if v is not None and v.bleu is not None]


def _lacking(what: str) -> Finding:
    return Finding(None, f"needs {what}")


def _longest_bucket(variants: list[Variant]) -> str | None:
    """The longest source-length bucket every variant was scored on, with at least
    MIN_BUCKET_SENTENCES test sentences."""
    common: set[str] | None = None
    for variant in variants:
        counts = variant.bucket_counts()
        scored = {b for b in variant.bleu_by_length() if counts.get(b, 0) >= MIN_BUCKET_SENTENCES}
        common = scored if common is None else common & scored
    return max(common, key=bucket_key) if common else None


def _length_drop(variant: Variant, bucket: str) -> float | None:
    """Overall test BLEU minus BLEU on ``bucket`` (mean over seeds): how much is lost on
    long sentences."""
    overall, on_bucket = variant.scores("bleu").mean, variant.bleu_by_length()[bucket].mean
    return None if overall is None or on_bucket is None else overall - on_bucket


def _drop_larger(worse: Variant | None, others: list[Variant], text: str) -> Finding:
    """``worse`` loses more BLEU on the longest common bucket than every one of ``others``
    (those scored by length: a run that was never tested has no buckets)."""
    others = [v for v in others if v.bleu_by_length()]
    if worse is None or not worse.bleu_by_length() or not others:
        return _lacking(text)
    bucket = _longest_bucket([worse, *others])
    if bucket is None:
        return _lacking(f"a length bucket with >= {MIN_BUCKET_SENTENCES} sentences in every run")
    drops = {v.label: _length_drop(v, bucket) for v in [worse, *others]}
    if any(d is None for d in drops.values()):
        return _lacking("test BLEU of every variant")
    detail = f"overall - bucket {bucket}: " + ", ".join(f"{k} {_num(d)}" for k, d in drops.items())
    holds = all(drops[worse.label] > drops[o.label] for o in others)
    return Finding(holds, detail)


def _config_flag(run: Run, key: str) -> bool | None:
    value = run.config_value(key)
    return None if value is None else bool(value)


def _pairs(baseline: Variant | None, systems: Iterable[Variant | None]) -> Pairs:
    if baseline is None:
        return []
    return [(baseline, s) for s in systems if s is not None and s is not baseline]


# ---------------------------------------------------------------------------- E1
FAMILY_ORDER = {"seq2seq": 0, "bahdanau": 1, "luong": 2, "transformer": 3}


def _family_role(run: Run) -> Role:
    return {"family": run.family}


def _family_order(role: Role) -> Any:
    return FAMILY_ORDER.get(role.get("family"), 9)


def _e1_attention_gain(c: Comparison) -> Finding:
    plain = c.find(family="seq2seq")
    attention = _scored(v for v in c.variants if v.role["family"] not in ("seq2seq", None))
    if plain is None or plain.bleu is None or not attention:
        return _lacking("plain seq2seq and at least one attention model with a BLEU")
    detail = f"seq2seq {_num(plain.bleu)}; " + ", ".join(
        f"{v.label} {_num(v.bleu)} ({v.bleu - plain.bleu:+.2f})" for v in attention
    )
    return Finding(all(v.bleu >= plain.bleu + CLEAR for v in attention), detail)


def _e1_transformer_best(c: Comparison) -> Finding:
    transformer = c.find(family="transformer")
    scored = _scored(c.variants)
    if transformer is None or transformer.bleu is None or len(scored) < 2:
        return _lacking("a Transformer and another model with a BLEU")
    best = max(scored, key=lambda v: v.bleu)
    detail = f"best: {best.label} {_num(best.bleu)}; Transformer {_num(transformer.bleu)}"
    return Finding(best is transformer, detail)


def _e1_length(c: Comparison) -> Finding:
    plain = c.find(family="seq2seq")
    attention = [v for v in c.variants if v.role["family"] not in ("seq2seq", None)]
    return _drop_larger(plain, attention, "plain seq2seq and an attention model")


E1 = ExperimentSpec(
    name="e1_attention",
    title="E1 attention vs no attention (Bahdanau et al. 2014; Luong et al. 2015)",
    published=(
        "WMT14 en-fr: RNNencdec-30 13.93 vs RNNsearch-30 21.50; RNNencdec-50 17.82 vs "
        "RNNsearch-50 26.75. The encoder-decoder's BLEU drops sharply as sentences get longer; "
        "RNNsearch-50 does not deteriorate even beyond 50 words. Luong: global attention +2.8. "
        "Multi30k de-en peers: LSTM 13.76, Bahdanau 28.30, Transformer 36.52."
    ),
    expected=(
        "Attention RNNs several BLEU above plain seq2seq, the Transformer on top; BLEU by "
        "source length falling for plain seq2seq and flat for attention, including on "
        "sentences longer than any seen in training."
    ),
    role=_family_role,
    order=_family_order,
    checks=(
        Check(
            f"every attention model's mean BLEU is at least {CLEAR:g} above plain seq2seq's",
            _e1_attention_gain,
        ),
        Check("the Transformer has the highest mean BLEU", _e1_transformer_best, primary=False),
        Check(
            "plain seq2seq loses more BLEU from its overall score to the longest length bucket "
            f"(>= {MIN_BUCKET_SENTENCES} sentences) than every attention model",
            _e1_length,
            primary=False,
        ),
    ),
    contrasts=lambda c: _pairs(
        c.find(family="seq2seq"), [v for v in c.variants if v.role["family"] != "seq2seq"]
    ),
    plots=(BleuByLength(), LossCurves()),
)


# ---------------------------------------------------------------------------- E2
def _e2_role(run: Run) -> Role:
    return {"family": run.family, "reverse": _config_flag(run, "model.reverse_source")}


def _e2_gain(c: Comparison, family: str) -> tuple[Variant | None, Variant | None]:
    return c.find(family=family, reverse=False), c.find(family=family, reverse=True)


def _e2_plain_gain(c: Comparison) -> Finding:
    forward, reversed_ = _e2_gain(c, "seq2seq")
    if not _scored([forward]) or not _scored([reversed_]):
        return _lacking("plain seq2seq with and without reversal")
    gain = reversed_.bleu - forward.bleu
    detail = f"seq2seq forward {_num(forward.bleu)}, reversed {_num(reversed_.bleu)} ({gain:+.2f})"
    return Finding(gain >= SAME, detail)


def _e2_long_gain(c: Comparison) -> Finding:
    forward, reversed_ = _e2_gain(c, "seq2seq")
    if forward is None or reversed_ is None:
        return _lacking("plain seq2seq with and without reversal")
    bucket = _longest_bucket([forward, reversed_])
    if bucket is None:
        return _lacking(f"a length bucket with >= {MIN_BUCKET_SENTENCES} sentences")
    overall = [v.scores("bleu").mean for v in (forward, reversed_)]
    long = [v.bleu_by_length()[bucket].mean for v in (forward, reversed_)]
    if None in overall or None in long:
        return _lacking("test BLEU of both")
    gain_all, gain_long = overall[1] - overall[0], long[1] - long[0]
    detail = f"gain overall {gain_all:+.2f}, on bucket {bucket} {gain_long:+.2f}"
    return Finding(gain_long > gain_all, detail)


def _e2_attention_flat(c: Comparison) -> Finding:
    pairs = [_e2_gain(c, f) for f in c.values("family") if f != "seq2seq"]
    pairs = [(f, r) for f, r in pairs if _scored([f]) and _scored([r])]
    if not pairs:
        return _lacking("an attention model with and without reversal")
    changes = {f.role["family"]: r.bleu - f.bleu for f, r in pairs}
    detail = ", ".join(f"{k} {v:+.2f}" for k, v in changes.items())
    return Finding(all(abs(v) <= SAME for v in changes.values()), detail)


E2 = ExperimentSpec(
    name="e2_reversal",
    title="E2 source reversal (Sutskever et al. 2014)",
    published=(
        "Test perplexity 5.8 -> 4.7 and BLEU 25.9 -> 30.6 with the source reversed (single "
        "LSTM, beam 12: 26.17 vs 30.59); Luong en-de +1.3 BLEU (11.3 -> 12.6). Reversed models "
        "are better on long sentences."
    ),
    expected=(
        "A clear gain for plain seq2seq (larger on long sentences); about no change for "
        "attention models with a bidirectional encoder."
    ),
    role=_e2_role,
    order=lambda r: (_family_order(r), bool(r.get("reverse"))),
    checks=(
        Check(f"reversal raises plain seq2seq's mean BLEU by at least {SAME:g}", _e2_plain_gain),
        Check(
            "plain seq2seq gains more from reversal on the longest length bucket "
            f"(>= {MIN_BUCKET_SENTENCES} sentences) than overall",
            _e2_long_gain,
            primary=False,
        ),
        Check(
            f"every attention model's mean BLEU changes by at most {SAME:g} with reversal",
            _e2_attention_flat,
            primary=False,
        ),
    ),
    contrasts=lambda c: [
        pair
        for f in c.values("family")
        for pair in _pairs(c.find(family=f, reverse=False), [c.find(family=f, reverse=True)])
    ],
    plots=(BleuByLength(), LossCurves(facet=lambda r: r.get("family"))),
)


# ---------------------------------------------------------------------------- E3
def _e3_role(run: Run) -> Role:
    family = run.family
    role: Role = {"family": family}
    if family == "luong":
        role["score"] = run.config_value("model.attention.score")
        role["window"] = run.config_value("model.attention.window")
        role["feeding"] = _config_flag(run, "model.input_feeding")
    elif family == "bahdanau":
        role["form"] = run.config_value("model.attention.form")
    return role


def _luong(c: Comparison, score: str, feeding: bool = True) -> Variant | None:
    return c.find(family="luong", score=score, window="global", feeding=feeding)


def _e3_similar(c: Comparison) -> Finding:
    group = _scored(
        [_luong(c, "dot"), _luong(c, "general")]
        + [c.find(family="bahdanau", form=f) for f in ("concat", "separate", "feedforward")]
    )
    if len(group) < 2:
        return _lacking("at least two of Luong dot/general and the additive forms")
    spread = max(v.bleu for v in group) - min(v.bleu for v in group)
    detail = ", ".join(f"{v.label} {_num(v.bleu)}" for v in group) + f"; spread {spread:.2f}"
    return Finding(spread <= SAME, detail)


def _e3_location_worst(c: Comparison) -> Finding:
    location = _luong(c, "location")
    others = _scored(_luong(c, s) for s in ("dot", "general", "concat"))
    if not _scored([location]) or not others:
        return _lacking("Luong location and another global Luong score")
    detail = f"location {_num(location.bleu)}; " + ", ".join(
        f"{v.label} {_num(v.bleu)}" for v in others
    )
    return Finding(all(location.bleu < v.bleu for v in others), detail)


def _e3_input_feeding(c: Comparison) -> Finding:
    fed, unfed = _luong(c, "general"), _luong(c, "general", feeding=False)
    if not _scored([fed]) or not _scored([unfed]):
        return _lacking("Luong general with and without input feeding")
    gain = fed.bleu - unfed.bleu
    detail = f"with {_num(fed.bleu)}, without {_num(unfed.bleu)} ({gain:+.2f})"
    return Finding(gain >= SMALL, detail)


def _e3_contrasts(c: Comparison) -> Pairs:
    luong_general = _luong(c, "general")
    luong_others = [v for v in c.select(family="luong") if v is not luong_general]
    bahdanau = c.find(family="bahdanau", form="separate")
    return _pairs(luong_general, luong_others) + _pairs(
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
        _family_order(r),
        ["dot", "general", "concat", "location"].index(r["score"])
        if r.get("score") in ("dot", "general", "concat", "location")
        else 9,
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


# ---------------------------------------------------------------------------- E4
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


def _number(value: Any) -> Any:
    """A config number as float ("5e-4" included); anything else unchanged."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def _e4_role(run: Run) -> Role:
    return {
        "norm": run.config_value("model.norm"),
        "warmup": has_warmup(run),
        "lr": _number(run.config_value("optim.lr")),
        "layers": run.config_value("model.encoder_layers"),
    }


def _e4_settings(c: Comparison) -> list[tuple[float, int]]:
    return [(lr, layers) for lr in c.values("lr") for layers in c.values("layers")]


def _e4_post_fails(c: Comparison) -> Finding:
    if not c.values("lr") or not c.values("layers"):
        return _lacking("runs with optim.lr and model.encoder_layers")
    lr, layers = max(c.values("lr")), max(c.values("layers"))
    post = c.find(norm="post", warmup=False, lr=lr, layers=layers)
    pre = c.find(norm="pre", warmup=False, lr=lr, layers=layers)
    if not _scored([post]):
        return _lacking(f"post-LN without warmup at lr {lr:g}, {layers} layers")
    where = f"lr {lr:g}, {layers} layers, no warmup: "
    if post.diverged_fraction > 0:
        return Finding(True, where + f"post-LN {post.status_text()} (BLEU {_num(post.bleu)})")
    if not _scored([pre]):
        return _lacking(f"pre-LN without warmup at lr {lr:g}, {layers} layers (none diverged)")
    detail = where + f"post-LN {_num(post.bleu)} vs pre-LN {_num(pre.bleu)}, none diverged"
    return Finding(post.bleu < 0.5 * pre.bleu, detail)


def _e4_pre_needs_no_warmup(c: Comparison) -> Finding:
    found, details = [], []
    for lr, layers in _e4_settings(c):
        cold = c.find(norm="pre", warmup=False, lr=lr, layers=layers)
        warm = c.find(norm="pre", warmup=True, lr=lr, layers=layers)
        if not _scored([cold]) or not _scored([warm]):
            continue
        ok = cold.diverged_fraction == 0 and cold.bleu >= warm.bleu - SAME
        found.append(ok)
        details.append(
            f"lr {lr:g} L{layers}: {_num(cold.bleu)} vs {_num(warm.bleu)}"
            + (" (diverged)" if cold.diverged_fraction else "")
        )
    if not found:
        return _lacking("pre-LN with and without warmup at one lr and depth")
    return Finding(all(found), "pre-LN no warmup vs warmup: " + "; ".join(details))


def _e4_post_matches_pre(c: Comparison) -> Finding:
    found, details = [], []
    for lr, layers in _e4_settings(c):
        post = c.find(norm="post", warmup=True, lr=lr, layers=layers)
        pre = c.find(norm="pre", warmup=True, lr=lr, layers=layers)
        if not _scored([post]) or not _scored([pre]):
            continue
        found.append(abs(post.bleu - pre.bleu) <= SAME)
        details.append(f"lr {lr:g} L{layers}: {_num(post.bleu)} vs {_num(pre.bleu)}")
    if not found:
        return _lacking("post-LN and pre-LN with warmup at one lr and depth")
    return Finding(all(found), "with warmup, post-LN vs pre-LN: " + "; ".join(details))


def _e4_depth(c: Comparison) -> Finding:
    depths = c.values("layers")
    if len(depths) < 2 or not c.values("lr"):
        return _lacking("two depths")
    lr = max(c.values("lr"))
    shallow = c.find(norm="post", warmup=False, lr=lr, layers=depths[0])
    deep = c.find(norm="post", warmup=False, lr=lr, layers=depths[-1])
    if not _scored([shallow]) or not _scored([deep]):
        return _lacking(
            f"post-LN without warmup at lr {lr:g} at {depths[0]} and {depths[-1]} layers"
        )
    worse = deep.bleu < shallow.bleu or deep.diverged_fraction > shallow.diverged_fraction
    detail = (
        f"post-LN no warmup, lr {lr:g}: L{depths[0]} {_num(shallow.bleu)} "
        f"({shallow.status_text()}), L{depths[-1]} {_num(deep.bleu)} ({deep.status_text()})"
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
        for pair in _pairs(
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


# ---------------------------------------------------------------------------- E5
def _e5_role(run: Run) -> Role:
    d_model = _number(run.config_value("model.d_model"))
    heads = _number(run.config_value("model.heads"))
    numeric = isinstance(d_model, float) and isinstance(heads, float) and heads > 0
    return {
        "scale": _config_flag(run, "model.attention.scale"),
        "d_k": int(d_model // heads) if numeric else None,
    }


def first_entropy(variant: Variant) -> float | None:
    """Mean attention entropy (over kinds, layers and heads) at the first validation,
    mean over the variant's non-failed runs that recorded diagnostics."""
    from seq2seq_lab.analysis.entropy import mean_entropy

    values = []
    for run in variant.runs:
        records = run.validation_diagnostics()
        if run.status != "failed" and records and records[0].get("entropy"):
            per_kind = mean_entropy(records[0]["entropy"])
            values.append(mean_std(per_kind.values()).mean)
    return mean_std(values).mean


def _e5_pairs(c: Comparison) -> list[tuple[int, Variant | None, Variant | None]]:
    return [(dk, c.find(scale=True, d_k=dk), c.find(scale=False, d_k=dk)) for dk in c.values("d_k")]


def _e5_entropy_lower(c: Comparison) -> Finding:
    found, details = [], []
    for dk, scaled, unscaled in _e5_pairs(c):
        if scaled is None or unscaled is None:
            continue
        s, u = first_entropy(scaled), first_entropy(unscaled)
        if s is None or u is None:
            continue
        found.append(u < s)
        details.append(f"d_k {dk}: scaled {s:.3f}, unscaled {u:.3f}")
    if not found:
        return _lacking("attention entropy (diagnostics/validation.jsonl) with and without scaling")
    return Finding(all(found), "entropy (nats): " + "; ".join(details))


def _e5_entropy_falls(c: Comparison) -> Finding:
    points = [(dk, first_entropy(u)) for dk, _, u in _e5_pairs(c) if u is not None]
    points = [(dk, e) for dk, e in points if e is not None]
    if len(points) < 2:
        return _lacking("unscaled attention entropy at two values of d_k")
    falls = all(b[1] < a[1] for a, b in zip(points, points[1:]))
    return Finding(falls, "unscaled: " + ", ".join(f"d_k {dk} {e:.3f}" for dk, e in points))


def _e5_gaps(c: Comparison) -> list[tuple[int, float]]:
    return [(dk, s.bleu - u.bleu) for dk, s, u in _e5_pairs(c) if _scored([s]) and _scored([u])]


def _e5_worse_at_largest(c: Comparison) -> Finding:
    gaps = _e5_gaps(c)
    if not gaps:
        return _lacking("scaled and unscaled runs at one d_k")
    dk, gap = gaps[-1]
    return Finding(gap > 0, f"d_k {dk}: scaled - unscaled BLEU {gap:+.2f}")


def _e5_gap_grows(c: Comparison) -> Finding:
    gaps = _e5_gaps(c)
    if len(gaps) < 2:
        return _lacking("scaled and unscaled runs at two values of d_k")
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
        "or worse training without scaling, increasingly with d_k. (The diagnostics callback "
        "records entropy after each validation: the first validation stands in for init.)"
    ),
    role=_e5_role,
    order=lambda r: (r.get("d_k") or 0, not r.get("scale")),
    checks=(
        Check(
            "at every d_k the unscaled model's mean attention entropy at the first validation "
            "is lower than the scaled model's",
            _e5_entropy_lower,
        ),
        Check("the unscaled model's entropy falls as d_k grows", _e5_entropy_falls, primary=False),
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
    contrasts=lambda c: [pair for _, s, u in _e5_pairs(c) for pair in _pairs(s, [u])],
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


# ---------------------------------------------------------------------------- E6
def _e6_role(run: Run) -> Role:
    return {
        "positions": run.config_value("model.positions"),
        "heads": run.config_value("model.heads"),
        "activation": run.config_value("model.ffn_activation"),
    }


def _e6_base_heads(c: Comparison) -> Any:
    """The head count most variants share (one factor is changed at a time around it)."""
    heads = [v.role.get("heads") for v in c.variants if v.role.get("heads") is not None]
    return max(set(heads), key=heads.count) if heads else None


def _e6(c: Comparison, **change: Any) -> Variant | None:
    role = {"positions": "sinusoidal", "heads": _e6_base_heads(c), "activation": "relu"}
    return c.find(**{**role, **change})


def _e6_compare(
    c: Comparison, change: dict, text: str, holds: Callable[[float, float], bool]
) -> Finding:
    base, other = _e6(c), _e6(c, **change)
    if not _scored([base]) or not _scored([other]):
        return _lacking(f"the base model and {text}")
    detail = f"{other.label} {_num(other.bleu)} vs {base.label} {_num(base.bleu)}"
    return Finding(holds(other.bleu, base.bleu), detail)


def _e6_none_worst(c: Comparison) -> Finding:
    none, base = _e6(c, positions="none"), _e6(c)
    others = [v for v in _scored(c.variants) if v is not none]
    if not _scored([none]) or not _scored([base]):
        return _lacking("the base model and a model without positions")
    lowest = all(none.bleu < v.bleu for v in others)
    detail = f"no positions {_num(none.bleu)}, base {_num(base.bleu)}; lowest: {lowest}"
    return Finding(lowest and none.bleu <= base.bleu - CLEAR, detail)


def _e6_contrasts(c: Comparison) -> Pairs:
    base = _e6(c)
    return _pairs(base, c.variants)


E6 = ExperimentSpec(
    name="e6_positions_heads",
    title="E6 positions, heads and FFN activation (Vaswani et al. 2017 Table 3; Shaw et al. 2018)",
    published=(
        "Newstest2013 dev (ppl/BLEU, base 4.92/25.8): 1 head 5.29/24.9, 4 heads 5.00/25.5, 16 "
        "heads 4.91/25.8; learned positions 4.92/25.7 (~= sinusoidal); relative positions +1.3 "
        "(en-de) / +0.3 (en-fr) over absolute. No position information breaks word order."
    ),
    expected=(
        "No positions clearly worst; sinusoidal ~= learned; relative >= sinusoidal by a little; "
        "a single head about 1 BLEU below multi-head; SiLU ~= ReLU."
    ),
    role=_e6_role,
    order=lambda r: (
        ["sinusoidal", "learned", "relative", "none"].index(r["positions"])
        if r.get("positions") in ("sinusoidal", "learned", "relative", "none")
        else 9,
        r.get("heads") or 0,
        str(r.get("activation")),
    ),
    checks=(
        Check(
            f"the model without positions has the lowest mean BLEU, at least {CLEAR:g} below "
            "the base (sinusoidal, ReLU, the common head count)",
            _e6_none_worst,
        ),
        Check(
            f"learned positions are within {SAME:g} BLEU of sinusoidal",
            lambda c: _e6_compare(
                c, {"positions": "learned"}, "learned positions", lambda o, b: abs(o - b) <= SAME
            ),
            primary=False,
        ),
        Check(
            f"relative positions are at least sinusoidal's mean BLEU minus {SMALL:g}",
            lambda c: _e6_compare(
                c, {"positions": "relative"}, "relative positions", lambda o, b: o >= b - SMALL
            ),
            primary=False,
        ),
        Check(
            f"a single head is at least {SMALL:g} BLEU below the base",
            lambda c: _e6_compare(c, {"heads": 1}, "a single head", lambda o, b: o <= b - SMALL),
            primary=False,
        ),
        Check(
            f"SiLU is within {SAME:g} BLEU of ReLU",
            lambda c: _e6_compare(
                c, {"activation": "silu"}, "SiLU", lambda o, b: abs(o - b) <= SAME
            ),
            primary=False,
        ),
    ),
    contrasts=_e6_contrasts,
    plots=(LossCurves(), BleuByLength()),
)


# ---------------------------------------------------------------------------- E7
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
        gated = _scored([gru, lstm])
        if not _scored([rnn]) or not gated:
            continue
        found.append(all(rnn.bleu <= g.bleu - CLEAR for g in gated))
        details.append(
            f"{family}: rnn {_num(rnn.bleu)}, "
            + ", ".join(f"{g.role['cell']} {_num(g.bleu)}" for g in gated)
        )
    if not found:
        return _lacking("a vanilla RNN and a gated cell in one family")
    return Finding(all(found), "; ".join(details))


def _e7_rnn_long(c: Comparison) -> Finding:
    found, details = [], []
    for family, rnn, gru, lstm in _e7_families(c):
        gated = [v for v in (gru, lstm) if v is not None]
        finding = _drop_larger(rnn, gated, "a vanilla RNN and a gated cell")
        if finding.holds is not None:
            found.append(finding.holds)
            details.append(f"{family}: {finding.detail}")
    if not found:
        return _lacking(
            f"a vanilla RNN and a gated cell scored on a bucket of >= "
            f"{MIN_BUCKET_SENTENCES} long sentences"
        )
    return Finding(all(found), "; ".join(details))


def _e7_gru_lstm(c: Comparison) -> Finding:
    found, details = [], []
    for family, _, gru, lstm in _e7_families(c):
        if _scored([gru]) and _scored([lstm]):
            found.append(abs(gru.bleu - lstm.bleu) <= SAME)
            details.append(f"{family}: gru {_num(gru.bleu)}, lstm {_num(lstm.bleu)}")
    if not found:
        return _lacking("GRU and LSTM in one family")
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
    order=lambda r: (_family_order(r), CELL_ORDER.get(r.get("cell"), 9)),
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
        pair for _, rnn, gru, lstm in _e7_families(c) for pair in _pairs(lstm, [rnn, gru])
    ],
    plots=(BleuByLength(), LossCurves(facet=lambda r: r.get("family"))),
)


# ---------------------------------------------------------------------------- registry
SPECS: dict[str, ExperimentSpec] = {spec.name: spec for spec in (E1, E2, E3, E4, E5, E6, E7)}


def spec_for(name: str) -> ExperimentSpec:
    """The spec of a documented comparison; for any other experiment name (or runs with
    none) a plain one: results table, significance-free, BLEU by length and loss curves."""
    if name in SPECS:
        return SPECS[name]
    return ExperimentSpec(
        name=name,
        title=name,
        published="(not one of the documented comparisons)",
        expected="",
        role=lambda run: {},
        plots=(BleuByLength(), LossCurves()),
    )
