"""The across-seed test every verdict reads (report/evidence.py): Welch's t over seeds when
the test outputs are not there, the bootstrap term of test-set sampling when they are, and the
words the checks use (clearly better, about equal)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from report_support import corpus, translate, write_run
from scipy import stats

from seq2seq_lab.report.aggregate import group_variants
from seq2seq_lab.report.evidence import Difference, difference
from seq2seq_lab.report.runs import find_runs


def variants(tmp_path: Path, rows: dict[str, list[dict]]):
    """{label: [write_run kwargs per seed]} -> {label: Variant}."""
    for label, seeds in rows.items():
        for seed, kwargs in enumerate(seeds, 1):
            write_run(tmp_path / f"{label}_{seed}", experiment="x", variant=label,
                      family="bahdanau", seed=seed, **kwargs)  # fmt: skip
    runs, _ = find_runs(tmp_path)
    return {v.label: v for v in group_variants(runs, lambda r: {"v": r.variant})}


def seed_se(d: Difference) -> float:
    """The Welch standard error of the two seed means alone."""
    return math.sqrt(sum(np.var(s, ddof=1) / len(s) for s in (d.baseline_scores, d.system_scores)))


def test_without_test_outputs_it_is_welchs_t_test(tmp_path):
    a, b = [20.1, 20.9, 19.4], [23.0, 21.8, 24.1]
    found = variants(tmp_path, {"a": [{"bleu": x} for x in a], "b": [{"bleu": x} for x in b]})
    d = difference(found["a"], found["b"])
    welch = stats.ttest_ind(b, a, equal_var=False)
    assert not d.test_sampling
    assert d.delta == pytest.approx(np.mean(b) - np.mean(a))
    assert d.p == pytest.approx(welch.pvalue)
    interval = welch.confidence_interval(0.95)
    assert (d.low, d.high) == (pytest.approx(interval.low), pytest.approx(interval.high))


def test_test_set_sampling_widens_the_interval(tmp_path):
    sources, references = corpus(n=150)
    rows = {
        name: [
            {"texts": (sources, references, translate(references, rate, seed=10 * i + seed))}
            for seed in (1, 2, 3)
        ]
        for i, (name, rate) in enumerate((("a", 0.45), ("b", 0.3)))
    }
    found = variants(tmp_path, rows)
    d = difference(found["a"], found["b"])
    assert d.test_sampling
    assert d.se > seed_se(d) * 1.01  # the bootstrap term adds to the seed term
    assert d.delta > 0 and d.p < 0.05


def test_the_resamples_are_paired_across_variants(tmp_path):
    """Two variants with the same outputs: every resample gives both the same BLEU."""
    sources, references = corpus(n=80)
    hyps = [translate(references, 0.3, seed=s) for s in (1, 2, 3)]
    rows = {name: [{"texts": (sources, references, h)} for h in hyps] for name in ("a", "b")}
    found = variants(tmp_path, rows)
    d = difference(found["a"], found["b"])
    assert d.test_sampling and d.delta == 0 and d.p == 1.0
    assert d.se == pytest.approx(seed_se(d))  # the bootstrap term is exactly 0


def test_a_diverged_run_without_outputs_counts_zero(tmp_path):
    sources, references = corpus(n=80)
    texts = [(sources, references, translate(references, 0.3, seed=s)) for s in (1, 2, 3)]
    rows = {
        "a": [{"texts": t} for t in texts],
        "b": [{"status": "diverged", "tested": False}] + [{"texts": t} for t in texts[1:]],
    }
    found = variants(tmp_path, rows)
    d = difference(found["a"], found["b"])
    assert d.system_scores[0] == 0.0 and d.test_sampling
    assert d.delta == pytest.approx(-d.baseline_scores[0] / 3)


def test_a_failed_run_counts_nowhere(tmp_path):
    rows = {"a": [{"bleu": 20.0}, {"bleu": 21.0}], "b": [{"bleu": 25.0}, {"status": "failed"}]}
    d = difference(*variants(tmp_path, rows).values())
    assert d.system_scores == (25.0,)


def _difference(delta: float, low: float, high: float, p: float) -> Difference:
    return Difference("a", "b", (0.0,), (delta,), delta, 1.0, 4.0, p, low, high, False)


@pytest.mark.parametrize(
    "d, clearly, equal",
    [
        (_difference(3.0, 1.0, 5.0, 0.01), True, False),
        (_difference(3.0, -1.0, 7.0, 0.2), False, False),  # large but not significant
        (_difference(1.5, 0.5, 2.5, 0.01), False, False),  # significant but below CLEAR
        (_difference(0.2, -0.8, 1.2, 0.6), False, False),  # interval leaves ±1
        (_difference(0.2, -0.6, 0.9, 0.6), False, True),
    ],
)
def test_the_words_of_the_checks(d, clearly, equal):
    assert d.clearly_better(2.0) is clearly
    assert d.about_equal(1.0) is equal
