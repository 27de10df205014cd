"""Is one variant different from another, across seeds and test sentences?

The one statistical test every verdict reads. A variant's figure (its ``Measure``: test BLEU,
or the share of its short-sentence BLEU it keeps on long sentences...) is the mean over its
finished seeds (a diverged run without a test score counts 0 BLEU, ``aggregate.rule_bleu``).
The difference of two variants A (baseline) and B is

    Δ = mean_B - mean_A,

and its variance has two sources, both counted:

- **seeds**: another seed trains another model. Seed k gives every variant the same data order,
  so where A and B ran at least two seeds in common the test is **paired** on those seeds: the
  seed term is s_d² / n over the per-seed differences d_k = B_k - A_k (what the seeds share
  cancels), with n - 1 degrees of freedom, and a seed only one of them ran is left out of Δ (a
  fourth seed of some models, run later, must not turn their comparisons with the others into
  unpaired ones). Otherwise it is Welch's s_A²/n_A + s_B²/n_B with Satterthwaite's degrees of
  freedom.
- **test sentences**: another test set of the same size would score the same models
  differently. Every run is scored on R bootstrap resamples of the test sentences, the same
  resamples for every run (Koehn 2004). The variance of the resampled Δ* mixes two parts: how
  each seed's model happens to fit these sentences, which the seed term already holds, and how
  the *variants* differ sentence by sentence, which no number of seeds shows. Only the second
  is added; per variant V with n_V seeds, the first is estimated from each run's deviation from
  its variant's resampled mean, so

      v_test = max(0, Var*(Δ*) - Σ_V Var*(R_Vk - mean_j R_Vj) summed over k / ((n_V - 1) n_V)),

  with N - 1 degrees of freedom for N test sentences.

SE² = seed term + v_test; the degrees of freedom are Satterthwaite's over both terms. Adding a
variance source must never make the test less conservative, and Satterthwaite's df grows when
a well-determined term is added, which can narrow the interval; so the interval's half-width
is the larger of the combined one and the seed term's alone, and p the larger of their two
p values. ``tests/test_report_evidence.py`` validates the test by simulation (false-positive
rate and interval coverage, paired and unpaired).

A measure that has no per-sentence record (test perplexity, the length probe's joined inputs,
gradient norms) is compared across seeds alone, and says so (``sentence_level``); a BLEU
difference whose runs lack their test outputs has no v_test (``test_var`` None), and the checks
treat it as not measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache

import numpy as np
from sacrebleu.metrics import BLEU
from scipy import stats

from seq2seq_lab.metrics.length_buckets import bucket_label
from seq2seq_lab.report.aggregate import Variant, rule_bleu
from seq2seq_lab.report.runs import Run

P_SIGNIFICANT = 0.05
RESAMPLES = 1000  # bootstrap resamples of the test sentences (sacrebleu's default count)
RESAMPLE_SEED = 12345  # sacrebleu's default SACREBLEU_SEED: the same sentences for every run


# ---------------------------------------------------------------------------- measures
@dataclass(frozen=True)
class Measure:
    """A figure of one run: ``value(run)`` as recorded (None: the run has none), and, for a
    measure with per-sentence records, ``resampled(run)`` on each of the RESAMPLES bootstrap
    resamples of the test sentences (None: the run lacks its outputs)."""

    name: str
    value: Callable[[Run], float | None]
    resampled: Callable[[Run], np.ndarray | None] | None = None

    @property
    def sentence_level(self) -> bool:
        return self.resampled is not None


def _outputs(run: Run) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    hypotheses, references = run.test_lines("hypotheses"), run.test_lines("references")
    if hypotheses is None or references is None or len(hypotheses) != len(references):
        return None
    return tuple(hypotheses), tuple(references)


def _bleu_resampled(run: Run) -> np.ndarray | None:
    outputs = _outputs(run)
    if outputs is None:  # diverged before any usable checkpoint: 0 on every resample
        return np.zeros(RESAMPLES) if rule_bleu(run) == 0 else None
    return _resampled_bleu(*outputs)


TEST_BLEU = Measure("test BLEU", rule_bleu, _bleu_resampled)


def retention(long: str, short: str) -> Measure:
    """The share of its short-sentence BLEU a run keeps on long sentences: BLEU on source-length
    bucket ``long`` over BLEU on bucket ``short`` (test set, ``metrics/length_buckets.py``)."""

    def value(run: Run) -> float | None:
        buckets = run.buckets()
        low, high = ((buckets.get(b) or {}).get("bleu") for b in (short, long))
        return float(high) / float(low) if low and high is not None else None

    def resampled(run: Run) -> np.ndarray | None:
        outputs, sources = _outputs(run), run.test_lines("sources")
        if outputs is None or sources is None or len(sources) != len(outputs[0]):
            return None
        labels = [bucket_label(len(s.split())) for s in sources]
        masks = [tuple(label == b for label in labels) for b in (long, short)]
        on_long, on_short = (_resampled_bleu(*outputs, mask) for mask in masks)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(on_short > 0, on_long / np.where(on_short > 0, on_short, 1), np.nan)

    return Measure(f"retention {long} / {short}", value, resampled)


def recorded(name: str, value: Callable[[Run], float | None]) -> Measure:
    """A measure with no per-sentence record: compared across seeds alone."""
    return Measure(name, value)


# ---------------------------------------------------------------------------- the difference
@dataclass(frozen=True)
class Difference:
    """B - A in ``measure``, mean over seeds, with its uncertainty (module docstring)."""

    baseline: str
    system: str
    measure: str
    baseline_scores: tuple[float, ...]  # one per finished seed (seed order when paired)
    system_scores: tuple[float, ...]
    paired: bool
    delta: float
    seed_var: float  # the seed term of Var(Δ)
    seed_df: float
    test_var: float | None  # v_test; None: not measured
    sentences: int | None  # N, the test sentences v_test was measured on
    sentence_level: bool  # whether the measure has per-sentence records at all
    unmatched: int = 0  # runs left out when paired: their seed was run by one variant only

    @property
    def test_sampling(self) -> bool:
        return self.test_var is not None

    @property
    def seeds(self) -> int:
        """Seeds per variant (the fewer side when unpaired)."""
        return min(len(self.baseline_scores), len(self.system_scores))

    def _parts(self) -> list[tuple[float, float]]:
        """(variance, df) of the combined test and of the seed term alone (module docstring)."""
        test = self.test_var or 0.0
        total = self.seed_var + test
        seed_part = self.seed_var**2 / self.seed_df if math.isfinite(self.seed_df) else 0.0
        test_part = test**2 / (self.sentences - 1) if test and (self.sentences or 0) > 1 else 0.0
        denominator = seed_part + test_part
        df = total**2 / denominator if denominator > 0 else math.inf
        parts = [(total, df)]
        if test and self.seed_var > 0:
            parts.append((self.seed_var, self.seed_df))
        return [(v, d) for v, d in parts if v > 0]

    @property
    def se(self) -> float:
        return math.sqrt(self.seed_var + (self.test_var or 0.0))

    @property
    def df(self) -> float:
        parts = self._parts()
        return parts[0][1] if parts else math.inf

    @property
    def p(self) -> float:
        """Two-sided p of Δ = 0: the larger of the combined and the seed-only test's."""
        parts = self._parts()
        if not parts:  # identical scores everywhere: no evidence of a difference unless Δ says so
            return 1.0 if self.delta == 0 else 0.0
        return max(float(2 * stats.t.sf(abs(self.delta) / math.sqrt(v), d)) for v, d in parts)

    def half_width(self, level: float = 0.95) -> float:
        q = 1 - (1 - level) / 2
        return max((float(stats.t.ppf(q, d)) * math.sqrt(v) for v, d in self._parts()), default=0.0)

    def half_widths(self, level: float = 0.95) -> tuple[float, float]:
        """The half-width each variance term alone would give: (seeds, test sentences)."""
        q = 1 - (1 - level) / 2
        seeds = float(stats.t.ppf(q, self.seed_df)) * math.sqrt(self.seed_var)
        n = self.sentences or 0
        test = self.test_var or 0.0
        sentences = float(stats.t.ppf(q, n - 1)) * math.sqrt(test) if n > 1 and test else 0.0
        return (seeds if math.isfinite(seeds) else 0.0), sentences

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        half = self.half_width(level)
        return self.delta - half, self.delta + half

    @property
    def low(self) -> float:
        return self.interval()[0]

    @property
    def high(self) -> float:
        return self.interval()[1]

    def with_seeds(self, n: float) -> Difference:
        """The same difference had each variant ``n`` seeds at the observed spread (``math.inf``:
        seeds no longer count, only the test sentences do)."""
        scale = self.seeds / n
        df = (n - 1) if self.paired else self.seed_df * (n - 1) / max(1, self.seeds - 1)
        return replace(self, seed_var=self.seed_var * scale, seed_df=df)

    def text(self) -> str:
        """ "+3.21 [+1.02, +5.40], p 0.012" """
        return f"{self.delta:+.2f} [{self.low:+.2f}, {self.high:+.2f}], p {format_p(self.p)}"


def format_p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def scored_runs(variant: Variant, measure: Measure = TEST_BLEU) -> list[tuple[Run, float]]:
    """The variant's finished runs with the figure the rules see, one per seed."""
    found = [(run, measure.value(run)) for run in variant.runs if run.finished]
    return [(run, x) for run, x in found if x is not None and math.isfinite(x)]


def difference(
    baseline: Variant, system: Variant, measure: Measure = TEST_BLEU
) -> Difference | None:
    """The test of the module docstring; None unless both variants have a scored run."""
    a, b = scored_runs(baseline, measure), scored_runs(system, measure)
    if not a or not b:
        return None
    common = common_seeds(a, b)
    paired = len(common) > 1
    unmatched = 0
    if paired:
        unmatched = len(a) + len(b) - 2 * len(common)
        a = sorted((x for x in a if x[0].seed in common), key=lambda x: x[0].seed)
        b = sorted((x for x in b if x[0].seed in common), key=lambda x: x[0].seed)
    rows_a = rows_b = sentences = None
    if measure.sentence_level:
        sentences = _common_test_set([r for r, _ in a + b])
        if sentences:
            rows_a = [measure.resampled(r) for r, _ in a]
            rows_b = [measure.resampled(r) for r, _ in b]
    found = combine(
        (baseline.label, [x for _, x in a], rows_a),
        (system.label, [x for _, x in b], rows_b),
        paired=paired,
        measure=measure,
        sentences=sentences,
    )
    return replace(found, unmatched=unmatched)


def common_seeds(a: list[tuple[Run, float]], b: list[tuple[Run, float]]) -> set[int]:
    """The seeds both sides ran, where each side's seeds are known and distinct (a side that
    ran one seed twice, or whose record lacks it, pairs with nothing)."""
    seeds_a, seeds_b = [r.seed for r, _ in a], [r.seed for r, _ in b]
    for seeds in (seeds_a, seeds_b):
        if None in seeds or len(set(seeds)) != len(seeds):
            return set()
    return set(seeds_a) & set(seeds_b)


Side = tuple[str, Sequence[float], Sequence[np.ndarray | None] | None]


def combine(
    baseline: Side,
    system: Side,
    *,
    paired: bool,
    measure: Measure,
    sentences: int | None,
    same_models: bool = False,
) -> Difference:
    """The difference of two sides, each (label, one figure per seed, each seed's figure on
    the RESAMPLES resamples or None), the seeds in the same order when ``paired``;
    ``same_models``: both sides are figures of the same runs (two decoders of one model), so
    the test-sentence term keeps their covariance (:func:`test_variance`)."""
    (label_a, scores_a, rows_a), (label_b, scores_b, rows_b) = baseline, system
    test_var = None
    rows = [*(rows_a or [None]), *(rows_b or [None])]
    if sentences and all(r is not None for r in rows):
        test_var = test_variance(np.stack(rows_a, 1), np.stack(rows_b, 1), same_models)
    delta, seed_var, seed_df = seed_term(scores_a, scores_b, paired)
    return Difference(
        baseline=label_a,
        system=label_b,
        measure=measure.name,
        baseline_scores=tuple(scores_a),
        system_scores=tuple(scores_b),
        paired=paired,
        delta=delta,
        seed_var=seed_var,
        seed_df=seed_df,
        test_var=test_var,
        sentences=sentences if test_var is not None else None,
        sentence_level=measure.sentence_level,
    )


def level(label: str, scores: Sequence[float], measure: str) -> Difference:
    """One variant's mean ``measure`` over its seeds, as a difference from 0 (across seeds
    alone): what a claim about one variant's figure ("keeps less than half") reads."""
    zeros = [0.0] * len(scores)
    delta, seed_var, seed_df = seed_term(zeros, scores, paired=len(scores) > 1)
    return Difference(
        baseline="0",
        system=label,
        measure=measure,
        baseline_scores=tuple(zeros),
        system_scores=tuple(scores),
        paired=len(scores) > 1,
        delta=delta,
        seed_var=seed_var,
        seed_df=seed_df,
        test_var=None,
        sentences=None,
        sentence_level=False,
    )


def seed_term(
    scores_a: Sequence[float], scores_b: Sequence[float], paired: bool
) -> tuple[float, float, float]:
    """(Δ, the seed term of its variance, its degrees of freedom); a side with one seed adds
    no estimable variance (the seed gate keeps such runs from any verdict)."""
    a, b = np.asarray(scores_a, float), np.asarray(scores_b, float)
    delta = float(b.mean() - a.mean())
    if paired:
        d = b - a
        return delta, float(np.var(d, ddof=1) / len(d)), float(len(d) - 1)
    terms = [float(np.var(s, ddof=1) / len(s)) if len(s) > 1 else 0.0 for s in (a, b)]
    denominator = sum(t**2 / (len(s) - 1) for t, s in zip(terms, (a, b)) if len(s) > 1)
    var = sum(terms)
    return delta, var, (var**2 / denominator if denominator > 0 else math.inf)


def test_variance(
    resampled_a: np.ndarray, resampled_b: np.ndarray, same_models: bool = False
) -> float:
    """v_test from (R, n_A) and (R, n_B) resampled figures (module docstring): the variance of
    the resampled Δ* less what each seed's own fit to the sentences contributes.

    With ``same_models`` column k of both is the same run (two decoders of one model): seed
    k's own fit is then that of its difference d_k* = B_k* - A_k*, and the part to remove is
    Σ_k Var*(d_k* - mean_j d_j*) / ((n - 1) n). Removing each side's own instead would count
    twice what the two decodings of one model share, and leave nothing of the sentences."""
    v_boot = float(np.nanvar(resampled_b.mean(1) - resampled_a.mean(1), ddof=1))
    within = 0.0
    if same_models:
        sides: tuple[np.ndarray, ...] = (resampled_b - resampled_a,)
    else:
        sides = (resampled_a, resampled_b)
    for rows in sides:
        n = rows.shape[1]
        if n > 1:
            deviation = rows - rows.mean(1, keepdims=True)
            within += float(np.nanvar(deviation, axis=0, ddof=1).sum()) / ((n - 1) * n)
    return max(0.0, v_boot - within)


def _common_test_set(runs: list[Run]) -> int | None:
    """The number of test sentences when every run with outputs was tested on the same
    references; None when none has them or they differ."""
    references = None
    for run in runs:
        outputs = _outputs(run)
        if outputs is None:
            continue
        if references is None:
            references = outputs[1]
        elif outputs[1] != references:
            return None
    return len(references) if references else None


# ---------------------------------------------------------------------------- resampling
@cache
def _resamples(n_sentences: int) -> np.ndarray:
    """(RESAMPLES, n) counts: how often each sentence is drawn in each resample, the same for
    every run scored on ``n_sentences`` sentences (so the resamples are paired)."""
    rng = np.random.default_rng(RESAMPLE_SEED)
    return rng.multinomial(n_sentences, np.full(n_sentences, 1 / n_sentences), size=RESAMPLES)


@cache
def _sentence_statistics(hypotheses: tuple[str, ...], references: tuple[str, ...]) -> np.ndarray:
    """sacrebleu's per-sentence sufficient statistics (hypothesis and reference lengths,
    matched and total n-grams), one row per sentence."""
    metric = BLEU()
    return np.asarray(
        metric._extract_corpus_statistics(hypotheses, [list(references)]), dtype=np.int64
    )


def resampled_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """Corpus BLEU of ``hypotheses`` on each of the RESAMPLES resamples of its sentences (the
    resamples every run scored on as many sentences shares)."""
    return _resampled_bleu(tuple(hypotheses), tuple(references))


def resampled_length_ratio(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """c / r (13a tokens of the outputs over the references') on each resample."""
    per_sentence = _sentence_statistics(tuple(hypotheses), tuple(references))
    totals = _resamples(len(references)) @ per_sentence[:, :2]
    return totals[:, 0] / np.maximum(totals[:, 1], 1)


@cache
def _resampled_bleu(
    hypotheses: tuple[str, ...],
    references: tuple[str, ...],
    mask: tuple[bool, ...] | None = None,
) -> np.ndarray:
    """Corpus BLEU of ``hypotheses`` (only the sentences ``mask`` keeps) on every resample."""
    metric = BLEU()
    per_sentence = _sentence_statistics(hypotheses, references)
    if mask is not None:
        per_sentence = per_sentence * np.asarray(mask, dtype=np.int64)[:, None]
    totals = _resamples(len(references)) @ per_sentence
    return np.array([metric._compute_score_from_stats(list(row)).score for row in totals])
