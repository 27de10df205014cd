"""Is one variant's BLEU different from another's, across seeds and test sentences?

The one statistical test every verdict reads. A variant's score is the mean over its seeds of
each finished run's test BLEU (a diverged run without a test score counts 0, as in
``aggregate.rule_bleu``). The difference of two variants A (baseline) and B,

    Δ = mean_B - mean_A,

is uncertain for two reasons, and both are counted:

- **training variance**: another seed trains another model. Its share is the Welch standard
  error of the two seed means, s_A²/n_A + s_B²/n_B (sample variances over seeds);
- **test-set sampling**: another test set of the same size would score the same models
  differently. Its share v_test is the variance of Δ* = mean_B* - mean_A* over bootstrap
  resamples of the test sentences (Koehn 2004), every seed's run of both variants scored on
  the same resampled sentences (paired).

They add: SE² = s_A²/n_A + s_B²/n_B + v_test, and t = Δ / SE is read against Student's t with
the Welch-Satterthwaite degrees of freedom of the seed terms (the bootstrap term is estimated
from many resamples and adds none)

    df = SE⁴ / ((s_A²/n_A)² / (n_A - 1) + (s_B²/n_B)² / (n_B - 1)),

giving a two-sided p and the 95 % interval Δ ± t_{0.975, df} · SE. Why not one source alone:
a t-test over seeds treats the test set as the whole population (three seeds that happen to
agree make 0.3 BLEU "significant"), and a bootstrap over the sentences of one seed pair treats
one training run as the architecture. Words the checks use (thresholds in
``experiments/common.py``):

- **clearly better**: p < 0.05 and Δ >= CLEAR;
- **better** / **worse**: p < 0.05 and Δ > 0 / Δ < 0;
- **about equal**: the whole 95 % interval inside [-SAME, +SAME].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from sacrebleu.metrics import BLEU
from scipy import stats

from seq2seq_lab.report.aggregate import Variant, rule_bleu
from seq2seq_lab.report.runs import Run

P_SIGNIFICANT = 0.05
RESAMPLES = 1000  # bootstrap resamples of the test sentences (sacrebleu's default count)
RESAMPLE_SEED = 12345  # sacrebleu's default SACREBLEU_SEED: the same sentences for every run


@dataclass(frozen=True)
class Difference:
    """B - A in mean test BLEU over seeds, with its uncertainty (module docstring)."""

    baseline: str
    system: str
    baseline_scores: tuple[float, ...]  # one BLEU per finished seed
    system_scores: tuple[float, ...]
    delta: float
    se: float
    df: float
    p: float
    low: float  # the 95 % interval of delta
    high: float
    test_sampling: bool  # whether v_test could be measured (both had test outputs)

    def better(self) -> bool:
        return self.p < P_SIGNIFICANT and self.delta > 0

    def worse(self) -> bool:
        return self.p < P_SIGNIFICANT and self.delta < 0

    def clearly_better(self, margin: float) -> bool:
        return self.p < P_SIGNIFICANT and self.delta >= margin

    def about_equal(self, margin: float) -> bool:
        return -margin <= self.low and self.high <= margin

    def text(self) -> str:
        """ "+3.21 [1.02, 5.40], p 0.012" """
        return f"{self.delta:+.2f} [{self.low:+.2f}, {self.high:+.2f}], p {format_p(self.p)}"


def format_p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def scored_runs(variant: Variant) -> list[tuple[Run, float]]:
    """The variant's finished runs with the BLEU the rules see, one per seed."""
    found = [(run, rule_bleu(run)) for run in variant.runs if run.finished]
    return [(run, bleu) for run, bleu in found if bleu is not None]


def difference(baseline: Variant, system: Variant) -> Difference | None:
    """The test of the module docstring; None unless both variants have a scored run."""
    a, b = scored_runs(baseline), scored_runs(system)
    if not a or not b:
        return None
    scores_a, scores_b = [s for _, s in a], [s for _, s in b]
    delta = float(np.mean(scores_b) - np.mean(scores_a))
    seed_terms = [_var_of_mean(scores_a), _var_of_mean(scores_b)]
    v_test = _test_sampling_variance([r for r, _ in a], [r for r, _ in b], scores_a, scores_b)
    variance = sum(seed_terms) + (v_test or 0.0)
    se = math.sqrt(variance)
    denominator = sum(term**2 / (len(s) - 1) for term, s in zip(seed_terms, (a, b)) if len(s) > 1)
    df = variance**2 / denominator if denominator > 0 else math.inf
    if se > 0:
        p = float(2 * stats.t.sf(abs(delta) / se, df))
        half = float(stats.t.ppf(1 - P_SIGNIFICANT / 2, df)) * se
    else:  # identical scores everywhere: no evidence of a difference unless delta says so
        p, half = (1.0 if delta == 0 else 0.0), 0.0
    return Difference(
        baseline=baseline.label,
        system=system.label,
        baseline_scores=tuple(scores_a),
        system_scores=tuple(scores_b),
        delta=delta,
        se=se,
        df=df,
        p=p,
        low=delta - half,
        high=delta + half,
        test_sampling=v_test is not None,
    )


def _var_of_mean(scores: Sequence[float]) -> float:
    """s² / n, the squared standard error of a seed mean (0 for one seed: no estimate)."""
    return float(np.var(scores, ddof=1) / len(scores)) if len(scores) > 1 else 0.0


def _test_sampling_variance(
    runs_a: list[Run], runs_b: list[Run], scores_a: list[float], scores_b: list[float]
) -> float | None:
    """Var(Δ*) over bootstrap resamples of the test sentences; None when some tested run lacks
    its outputs or the runs were tested on different sentences. A run with no test outputs and
    0 BLEU (diverged before any usable checkpoint) scores 0 on every resample."""
    references = None
    for run, score in zip(runs_a + runs_b, scores_a + scores_b):
        if run.test_lines("hypotheses") is None:
            if score != 0:
                return None
            continue
        refs = tuple(run.test_lines("references") or ())
        if len(refs) != len(run.test_lines("hypotheses")):
            return None
        if references is None:
            references = refs
        elif refs != references:
            return None
    if not references:
        return None

    def resampled(runs: list[Run]) -> np.ndarray:
        rows = [run.test_lines("hypotheses") for run in runs]
        return np.mean(
            [_resampled_bleu(tuple(h), references) if h else np.zeros(RESAMPLES) for h in rows],
            axis=0,
        )

    return float(np.var(resampled(runs_b) - resampled(runs_a), ddof=1))


@cache
def _resamples(n_sentences: int) -> np.ndarray:
    """(RESAMPLES, n) counts: how often each sentence is drawn in each resample, the same for
    every run scored on ``n_sentences`` sentences (so the resamples are paired)."""
    rng = np.random.default_rng(RESAMPLE_SEED)
    return rng.multinomial(n_sentences, np.full(n_sentences, 1 / n_sentences), size=RESAMPLES)


@cache
def _resampled_bleu(hypotheses: tuple[str, ...], references: tuple[str, ...]) -> np.ndarray:
    """Corpus BLEU of ``hypotheses`` on every resample, from sacrebleu's per-sentence
    sufficient statistics (hypothesis and reference lengths, matched and total n-grams)."""
    metric = BLEU()
    per_sentence = np.asarray(
        metric._extract_corpus_statistics(hypotheses, [list(references)]), dtype=np.int64
    )
    totals = _resamples(len(references)) @ per_sentence
    return np.array([metric._compute_score_from_stats(list(row)).score for row in totals])
