"""The across-seed test every verdict reads (report/evidence.py): paired by seed where the seeds
pair, Welch's seed term where they do not, the test-sentence term that seeds cannot show, and
degrees of freedom that never make the test less conservative when a variance source is
added; validated by simulation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from report_support import corpus, translate, write_run
from scipy import stats

from seq2seq_lab.report.aggregate import group_variants
from seq2seq_lab.report.checks import difference_text
from seq2seq_lab.report.evidence import (
    TEST_BLEU,
    Difference,
    combine,
    difference,
    level,
)
from seq2seq_lab.report.evidence import (
    test_variance as sentence_variance,
)
from seq2seq_lab.report.markdown import pairing
from seq2seq_lab.report.rules import Claim
from seq2seq_lab.report.runs import find_runs


def variants(tmp_path: Path, rows: dict[str, list[dict]]):
    """{label: [write_run kwargs per seed]} -> {label: Variant}."""
    for label, seeds in rows.items():
        for seed, kwargs in enumerate(seeds, 1):
            kwargs = {"seed": seed, "bleu_only": True, **kwargs}
            write_run(tmp_path / f"{label}_{kwargs['seed']}", experiment="x", variant=label,
                      family="bahdanau", **kwargs)  # fmt: skip
    runs, _ = find_runs(tmp_path)
    return {v.label: v for v in group_variants(runs, lambda r: {"v": r.variant})}


def test_same_seeds_are_paired_as_a_paired_t_test(tmp_path):
    a, b = [20.1, 20.9, 19.4], [23.0, 21.8, 24.1]
    found = variants(tmp_path, {"a": [{"bleu": x} for x in a], "b": [{"bleu": x} for x in b]})
    d = difference(found["a"], found["b"])
    paired = stats.ttest_rel(b, a)
    assert d.paired and not d.test_sampling
    assert d.p == pytest.approx(paired.pvalue)
    interval = paired.confidence_interval(0.95)
    assert (d.low, d.high) == (pytest.approx(interval.low), pytest.approx(interval.high))


def test_pairing_removes_what_the_seeds_share(tmp_path):
    """Seed 2 low in both variants: unpaired the spread hides a steady +1, paired it does not."""
    a, b = [25.0, 20.0, 30.0], [26.0, 21.1, 30.9]
    found = variants(tmp_path, {"a": [{"bleu": x} for x in a], "b": [{"bleu": x} for x in b]})
    d = difference(found["a"], found["b"])
    assert d.paired and d.p < 0.01
    welch = stats.ttest_ind(b, a, equal_var=False)
    assert welch.pvalue > 0.5


def test_other_seeds_are_welchs_t_test(tmp_path):
    a, b = [20.1, 20.9, 19.4], [23.0, 21.8, 24.1]
    rows = {
        "a": [{"bleu": x, "seed": s} for x, s in zip(a, (1, 2, 3))],
        "b": [{"bleu": x, "seed": s} for x, s in zip(b, (4, 5, 6))],
    }
    d = difference(*variants(tmp_path, rows).values())
    welch = stats.ttest_ind(b, a, equal_var=False)
    assert not d.paired
    assert d.p == pytest.approx(welch.pvalue)


def test_a_seed_one_variant_alone_ran_is_left_out_of_a_paired_test(tmp_path):
    """A fourth seed added to one variant later: the test stays paired on the three seeds both
    ran (an unpaired test on seeds that pair throws away what they share), and says so."""
    a, b = [25.0, 20.0, 30.0], [26.0, 21.1, 30.9, 35.0]
    found = variants(tmp_path, {"a": [{"bleu": x} for x in a], "b": [{"bleu": x} for x in b]})
    d = difference(found["a"], found["b"])
    paired = stats.ttest_rel(b[:3], a)
    assert d.paired and d.unmatched == 1 and d.seeds == 3
    assert d.delta == pytest.approx(np.mean(b[:3]) - np.mean(a))
    assert d.p == pytest.approx(paired.pvalue)
    assert "(paired on the 3 seeds both ran, " in difference_text(Claim("at least"), d)
    assert pairing(d) == "yes, 1 unmatched run left out"


def test_one_seed_in_common_is_no_pair(tmp_path):
    rows = {
        "a": [{"bleu": x, "seed": s} for x, s in zip([20.1, 20.9, 19.4], (1, 2, 3))],
        "b": [{"bleu": x, "seed": s} for x, s in zip([23.0, 21.8, 24.1], (3, 4, 5))],
    }
    d = difference(*variants(tmp_path, rows).values())
    assert not d.paired and d.unmatched == 0 and len(d.system_scores) == 3


def test_a_steady_sentence_by_sentence_difference_widens_the_interval(tmp_path):
    """Variant a fails on long sentences with every seed: another test set would hold other
    long sentences, which seeds cannot show, so the test-sentence term is counted."""
    sources, references = corpus(n=150)
    rows = {
        name: [
            {"texts": (sources, references, translate(references, 0.3, 10 * i + s, penalty))}
            for s in (1, 2, 3)
        ]
        for i, (name, penalty) in enumerate((("a", 0.02), ("b", 0.0)))
    }
    found = variants(tmp_path, rows)
    d = difference(found["a"], found["b"])
    assert d.test_sampling and d.test_var > 0
    assert d.se > np.sqrt(d.seed_var) * 1.01
    assert d.delta > 0 and d.p < 0.05


def test_independent_errors_add_no_test_sentence_term(tmp_path):
    """Each seed's errors fall on other words: the seeds' spread already holds them."""
    sources, references = corpus(n=150)
    rows = {
        name: [
            {"texts": (sources, references, translate(references, rate, seed=10 * i + s))}
            for s in (1, 2, 3)
        ]
        for i, (name, rate) in enumerate((("a", 0.35), ("b", 0.3)))
    }
    d = difference(*variants(tmp_path, rows).values())
    assert d.test_sampling and d.test_var < 0.05 * d.seed_var


def test_the_resamples_are_paired_across_variants(tmp_path):
    """Two variants with the same outputs: the test-sentence term is exactly 0."""
    sources, references = corpus(n=80)
    hyps = [translate(references, 0.3, seed=s) for s in (1, 2, 3)]
    rows = {name: [{"texts": (sources, references, h)} for h in hyps] for name in ("a", "b")}
    found = variants(tmp_path, rows)
    d = difference(found["a"], found["b"])
    assert d.test_sampling and d.delta == 0 and d.p == 1.0 and d.test_var == 0


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
    assert d.system_scores == (25.0,) and not d.paired


def _made(seed_var: float, seed_df: float, test_var: float | None, sentences: int = 40):
    return Difference(
        "a", "b", "test BLEU", (0.0,) * 3, (1.0,) * 3, True, 1.0, seed_var, seed_df,
        test_var, sentences, True,
    )  # fmt: skip


@pytest.mark.parametrize("seed_var", [0.05, 0.2, 1.0, 4.0])
@pytest.mark.parametrize("test_var", [0.001, 0.02, 0.1, 0.5, 2.0, 10.0])
def test_adding_a_variance_source_never_narrows_the_interval(seed_var, test_var):
    """Satterthwaite's df grows when a well-determined term is added (the old test let it
    narrow the interval and lower p); the half-width and p never fall here."""
    without, with_ = _made(seed_var, 2.0, 0.0), _made(seed_var, 2.0, test_var)
    assert with_.half_width() >= without.half_width() - 1e-12
    assert with_.half_width(0.90) >= without.half_width(0.90) - 1e-12
    assert with_.p >= without.p - 1e-12


def test_a_level_is_the_one_sample_t_interval():
    d = level("plain", [0.31, 0.36, 0.33], "retention")
    interval = stats.ttest_1samp([0.31, 0.36, 0.33], 0.0).confidence_interval(0.95)
    assert (d.low, d.high) == (pytest.approx(interval.low), pytest.approx(interval.high))


# ---------------------------------------------------------------------------- simulation
def simulate(paired: bool, comparisons: int = 1000, seed: int = 0) -> tuple[float, float]:
    """(false-positive rate of the 0.05 test, coverage of the 95 % interval) over simulated
    comparisons of two variants with no true difference. Each comparison draws a new test set
    of N sentences and new seeds; a run's score is its mean over sentences of

        x = seed effect (shared by the two variants' seed k when paired) + own seed effect
            + sentence difficulty (shared by all) + variant-by-sentence effect (the part no
            number of seeds averages away) + model-by-sentence noise,

    resampled on the same bootstrap counts for every run, as evidence.py does with BLEU."""
    rng = np.random.default_rng(seed)
    n, sentences, resamples = 3, 40, 200
    measure = TEST_BLEU
    false_positives = covered = 0
    for _ in range(comparisons):
        difficulty = rng.normal(0, 2.0, sentences)
        by_variant = rng.normal(0, 3.0, (2, sentences))
        shared = rng.normal(0, 1.0, n)
        counts = rng.multinomial(sentences, np.full(sentences, 1 / sentences), resamples)
        sides = []
        for v in range(2):
            seed_effect = shared if paired else rng.normal(0, 1.0, n)
            x = (
                (seed_effect + rng.normal(0, 0.5, n))[:, None]
                + difficulty
                + by_variant[v]
                + rng.normal(0, 2.0, (n, sentences))
            )
            rows = list((counts @ x.T / sentences).T)
            sides.append((str(v), list(x.mean(1)), rows))
        d = combine(*sides, paired=paired, measure=measure, sentences=sentences)
        false_positives += d.p < 0.05
        covered += d.low <= 0 <= d.high
    return false_positives / comparisons, covered / comparisons


@pytest.mark.parametrize("paired", [True, False], ids=["paired", "unpaired"])
def test_the_test_keeps_its_level_and_coverage_by_simulation(paired):
    false_positive_rate, coverage = simulate(paired)
    assert 0.03 <= false_positive_rate <= 0.07
    assert 0.93 <= coverage <= 0.97


def test_two_decoders_of_one_model_keep_their_covariance_in_the_sentence_term():
    """Two figures of the same runs (E8's decoders): each seed's two resampled figures share
    the model's fit to the sentences, and differ by a per-sentence effect of the decoder.
    Removing each side's own fit as if independent cancels that effect; removing the fit of
    their difference keeps it."""
    rng = np.random.default_rng(0)
    fit = rng.normal(0.0, 1.0, size=(1000, 5))  # each seed's fit to the resampled sentences
    decoder = rng.normal(0.0, 0.1, size=(1000, 1))  # the decoders' difference, every seed alike
    greedy, beam = 30.0 + fit, 30.2 + fit + decoder
    assert sentence_variance(greedy, beam) == 0.0  # the slip: independent sides, nothing left
    kept = sentence_variance(greedy, beam, same_models=True)
    assert kept == pytest.approx(0.01, rel=0.15)  # the decoders' own variance, 0.1²
