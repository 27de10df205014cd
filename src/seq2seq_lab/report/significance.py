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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest

DEFAULT_SAMPLES = 1000  # sacrebleu's default for the bootstrap test
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
