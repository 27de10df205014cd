"""Paired bootstrap through sacrebleu: small p for a clearly better system, large p for
identical outputs and for an equally good system with different outputs."""

from __future__ import annotations

import pytest
from report_support import corpus, translate

from seq2seq_lab.report.significance import paired_bootstrap

SAMPLES = 300  # enough resamples to separate the cases; keeps the file fast


@pytest.fixture(scope="module")
def references() -> list[str]:
    return corpus(n=150, seed=3)[1]


def test_clearly_better_system_has_a_small_p_value(references):
    baseline = translate(references, error_rate=0.5, seed=1)
    better = translate(references, error_rate=0.1, seed=2)
    (result,) = paired_bootstrap(
        ("base", baseline), [("better", better)], references, n_samples=SAMPLES
    )
    assert result.delta > 10
    assert result.p_value < 0.01
    assert result.metric == "bleu" and result.system == "better"
    assert "bs:300" in result.signature


def test_identical_outputs_have_p_one(references):
    hyps = translate(references, error_rate=0.3, seed=1)
    (result,) = paired_bootstrap(("a", hyps), [("b", list(hyps))], references, n_samples=SAMPLES)
    assert result.delta == 0.0
    assert result.p_value == 1.0


def test_equally_good_system_with_other_errors_has_a_large_p_value(references):
    a = translate(references, error_rate=0.3, seed=1)
    b = translate(references, error_rate=0.3, seed=2)
    (result,) = paired_bootstrap(("a", a), [("b", b)], references, n_samples=SAMPLES)
    assert result.p_value > 0.05


def test_several_systems_and_metrics_in_one_call(references):
    baseline = translate(references, error_rate=0.5, seed=1)
    systems = [("good", translate(references, 0.1, seed=2)), ("same", list(baseline))]
    results = paired_bootstrap(
        ("base", baseline), systems, references, metrics=("bleu", "chrf"), n_samples=SAMPLES
    )
    assert [(r.metric, r.system) for r in results] == [
        ("bleu", "good"),
        ("bleu", "same"),
        ("chrf", "good"),
        ("chrf", "same"),
    ]
    by = {(r.metric, r.system): r for r in results}
    assert by["chrf", "good"].p_value < 0.01 and by["chrf", "same"].p_value == 1.0
    assert by["bleu", "good"].baseline_score == by["bleu", "same"].baseline_score


def test_mismatched_lengths_are_an_error(references):
    hyps = translate(references, error_rate=0.3, seed=1)
    with pytest.raises(ValueError, match="hypotheses for"):
        paired_bootstrap(("a", hyps), [("b", hyps[:-1])], references)
    with pytest.raises(ValueError, match="unknown metrics"):
        paired_bootstrap(("a", hyps), [("b", hyps)], references, metrics=("meteor",))
