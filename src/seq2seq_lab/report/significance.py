"""Paired bootstrap resampling (Koehn 2004) with sacrebleu's own implementation.

For a baseline A and a system B scored on the same test sentences, sacrebleu's ``PairedTest``
(test_type "bs") draws n_samples resamples of the sentence indices (with replacement), scores
both systems on each from their per-sentence sufficient statistics, and returns

    p = (1 + #{resamples: |B* - A*| - mean(|B* - A*|) > |B - A|}) / (1 + n_samples)

i.e. how often a difference as large as the observed one appears when the resampled
differences are centred on zero (the Moses ``bootstrap-hypothesis-difference-significance``
test). Its resampling seed is ``SACREBLEU_SEED`` (default 12345), written in the signature.

One degenerate case is handled here: for identical outputs every resampled difference is 0
and sacrebleu's formula yields its smallest p, 1 / (1 + n_samples). Identical outputs carry no
evidence of a difference, so they get p = 1.

Which runs are paired (:func:`significance_tests`): for each contrast of a spec (baseline
variant, system variant), the runs of every seed both variants have, with test outputs on the
same sentences; without a common seed, the lowest tested seed of each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest

from seq2seq_lab.report.aggregate import Variant
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Comparison

DEFAULT_SAMPLES = 1000  # sacrebleu's default for the bootstrap test
P_SIGNIFICANT = 0.05  # the p below which the report stars a difference
METRICS = {"bleu": BLEU, "chrf": CHRF}


@dataclass(frozen=True)
class PairedResult:
    """One system against the baseline, for one metric."""

    metric: str
    baseline: str
    system: str
    baseline_score: float
    system_score: float
    p_value: float
    system_ci: float | None  # half-width of the system's 95% bootstrap interval
    signature: str

    @property
    def delta(self) -> float:
        return self.system_score - self.baseline_score


def paired_bootstrap(
    baseline: tuple[str, Sequence[str]],
    systems: Sequence[tuple[str, Sequence[str]]],
    references: Sequence[str],
    *,
    metrics: Sequence[str] = ("bleu",),
    n_samples: int = DEFAULT_SAMPLES,
) -> list[PairedResult]:
    """Test each of ``systems`` against ``baseline``, each given as (name, hypotheses) on the
    same ``references`` in the same order. Returns one result per system and metric."""
    if not systems:
        return []
    for name, hyps in [baseline, *systems]:
        if len(hyps) != len(references):
            raise ValueError(f"{name}: {len(hyps)} hypotheses for {len(references)} references")
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metrics {unknown}; expected some of {sorted(METRICS)}")
    named = [(baseline[0], list(baseline[1]))] + [(n, list(h)) for n, h in systems]
    test = PairedTest(
        named,
        {m: METRICS[m]() for m in metrics},
        references=[list(references)],
        test_type="bs",
        n_samples=n_samples,
    )
    signatures, scores = test()
    results = []
    # PairedTest keys its output by the metric's display name ("BLEU", "chrF2") in the order
    # the metrics were given
    for metric, display in zip(metrics, signatures):
        base = scores[display][0]
        for (name, hyps), result in zip(systems, scores[display][1:]):
            identical = list(hyps) == named[0][1]
            results.append(
                PairedResult(
                    metric=metric,
                    baseline=baseline[0],
                    system=name,
                    baseline_score=float(base.score),
                    system_score=float(result.score),
                    p_value=1.0 if identical else float(result.p_value),
                    system_ci=None if result.ci is None else float(result.ci),
                    signature=str(signatures[display]),
                )
            )
    return results


@dataclass(frozen=True)
class PairTest:
    """One seed-matched (or seed-1-of-each) paired test of a contrast."""

    baseline: Variant
    system: Variant
    baseline_seed: int | None
    system_seed: int | None
    results: tuple[PairedResult, ...]


def _testable(run: Run | None) -> bool:
    return run is not None and run.test_lines("hypotheses") is not None


def _seed_pairs(baseline: Variant, system: Variant) -> list[tuple[Run, Run]]:
    """Seed-matched pairs of runs that have test outputs; without a common seed, the lowest
    seed of each."""
    pairs = []
    for seed in baseline.seeds:
        a, b = baseline.run_for_seed(seed), system.run_for_seed(seed)
        if _testable(a) and _testable(b):
            pairs.append((a, b))
    if pairs:
        return pairs
    a = next((r for r in baseline.runs if _testable(r)), None)
    b = next((r for r in system.runs if _testable(r)), None)
    return [(a, b)] if a is not None and b is not None else []


def significance_tests(
    comparison: Comparison, n_samples: int, metrics: Sequence[str]
) -> tuple[list[PairTest], list[str]]:
    """Paired bootstrap for every contrast of the spec; one sacrebleu test per baseline run,
    all the systems paired with it at once. Returns the tests and notes on skipped pairs."""
    notes: list[str] = []
    jobs: dict[Path, tuple[Run, list[tuple[Variant, Variant, Run]]]] = {}
    contrasts = list(
        {(id(a), id(b)): (a, b) for a, b in comparison.spec.contrasts(comparison)}.values()
    )
    for baseline, system in contrasts:
        pairs = _seed_pairs(baseline, system)
        if not pairs:
            notes.append(f"{system.label} vs {baseline.label}: no pair of runs with test outputs")
        for a, b in pairs:
            jobs.setdefault(a.path, (a, []))[1].append((baseline, system, b))
    tests: list[PairTest] = []
    for base_run, members in jobs.values():
        references = base_run.test_lines("references")
        systems = []
        for baseline, system, run in members:
            if run.test_lines("references") != references or references is None:
                notes.append(
                    f"{system.label} (seed {run.seed}) vs {baseline.label} (seed "
                    f"{base_run.seed}): different test sentences, not paired"
                )
            else:
                systems.append((baseline, system, run))
        if not systems:
            continue
        # names only need to be unique within this call
        named = [
            (f"{i}:{s.label}", r.test_lines("hypotheses")) for i, (_, s, r) in enumerate(systems)
        ]
        results = paired_bootstrap(
            ("baseline", base_run.test_lines("hypotheses")),
            named,
            references,
            metrics=metrics,
            n_samples=n_samples,
        )
        for (name, _), (baseline, system, run) in zip(named, systems):
            mine = tuple(r for r in results if r.system == name)
            tests.append(PairTest(baseline, system, base_run.seed, run.seed, mine))
    # in the spec's contrast order, seeds ascending within a contrast
    order = {(id(a), id(b)): i for i, (a, b) in enumerate(contrasts)}
    tests.sort(key=lambda t: (order[id(t.baseline), id(t.system)], t.baseline_seed or 0))
    return tests, notes
