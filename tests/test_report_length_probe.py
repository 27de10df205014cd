"""The length probe's comparison (experiments/e1_length_probe/spec.py) on synthetic E1
runs: its verdict per outcome, and its report written beside E1's from the same runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from report_support import converging, write_run

from experiments.e1_length_probe.spec import SPEC as LENGTH_PROBE
from experiments.e1_length_probe.spec import retentions
from seq2seq_lab.report.generate import generate_report
from seq2seq_lab.report.runs import find_runs
from seq2seq_lab.report.spec import NOT_REPRODUCED, PARTLY, REPRODUCED, Comparison
from seq2seq_lab.report.specs import readers

FAMILIES = ("plain", "bahdanau", "luong", "transformer")


def probe_run(
    path: Path, family: str, seed: int, whole: float, long: float, gain: float = 0.0
) -> None:
    """An E1 run (test BLEU 40: above every floor) with a probe record: BLEU ``whole`` on the
    test set as it is and ``long`` on the longest bucket (81+, 40 inputs); its validation BLEU
    rose by ``gain`` over its last quarter (>= 1: not converged)."""
    write_run(path, experiment="e1_attention", variant=family, family=family, seed=seed,
              bleu=40.0, validations=converging(gain))  # fmt: skip
    results = json.loads((path / "results.json").read_text())
    results["length_probe"] = {
        "edges": [10, 20, 30, 40, 60, 80],
        "joins": {
            "1": {
                "inputs": 1000,
                "source_words": 12.0,
                "output_words": 11.0,
                "reference_words": 11.0,
                "bleu": whole,
                "length_ratio": 1.0,
                "brevity_penalty": 1.0,
            },
            # half as long as the joined references: BP = exp(1 - 2)
            "6": {
                "inputs": 166,
                "source_words": 65.0,
                "output_words": 35.0,
                "reference_words": 70.0,
                "bleu": long,
                "length_ratio": 0.5,
                "brevity_penalty": math.exp(-1),
            },
        },
        "bleu_by_length": {
            "11-20": {"bleu": whole, "count": 600},
            "61-80": {"bleu": (whole + long) / 2, "count": 200},
            "81+": {"bleu": long, "count": 40},
        },
    }
    (path / "results.json").write_text(json.dumps(results))


def write_grid(
    root: Path, kept: dict[str, tuple[float, ...]], whole: float = 40.0, rising: str = ""
) -> None:
    """One run per family and seed, keeping ``kept[family][seed - 1]`` of ``whole``; the
    family ``rising`` still improving."""
    for family, shares in kept.items():
        for seed, share in enumerate(shares, 1):
            gain = 5.0 if family == rising else 0.0
            probe_run(root / f"{family}_{seed}", family, seed, whole, whole * share, gain)


def outcome(root: Path):
    runs, _ = find_runs(root)
    return LENGTH_PROBE.verdict(Comparison(LENGTH_PROBE, runs))


ATTENTION = (0.70, 0.72, 0.74)


def test_attention_keeping_more_and_seq2seq_collapsing_reproduces(tmp_path):
    write_grid(tmp_path, {"plain": (0.20, 0.25, 0.30), **dict.fromkeys(FAMILIES[1:], ATTENTION)})
    verdict = outcome(tmp_path)
    assert verdict.outcome == REPRODUCED, verdict.findings
    main = verdict.findings[0][1]
    assert "bucket 81+: plain 0.25 ± 0.05" in main.detail
    assert "bahdanau - plain +0.47 [+0.40, +0.54], p 0.001 (paired, seeds only)" in main.detail


def test_seq2seq_keeping_half_is_no_collapse(tmp_path):
    write_grid(tmp_path, {"plain": (0.55, 0.56, 0.57), **dict.fromkeys(FAMILIES[1:], ATTENTION)})
    verdict = outcome(tmp_path)
    assert verdict.outcome == PARTLY and verdict.findings[1][1].holds is False
    assert verdict.gates == ("(2) fails",)


def test_retention_the_same_is_not_reproduced(tmp_path):
    write_grid(tmp_path, {"plain": (0.69, 0.71, 0.73), **dict.fromkeys(FAMILIES[1:], ATTENTION)})
    assert outcome(tmp_path).outcome == NOT_REPRODUCED


def test_retention_spread_over_seeds_is_undecided_and_says_how_many_seeds(tmp_path):
    """0.24 less in mean, but one seed above an attention seed: too few seeds, not a failure
    (the old Mann-Whitney test called it not reproduced)."""
    write_grid(tmp_path, {"plain": (0.30, 0.40, 0.71), **dict.fromkeys(FAMILIES[1:], ATTENTION)})
    verdict = outcome(tmp_path)
    main = verdict.findings[0][1]
    assert main.holds is None and main.why.startswith("too few seeds: 3; the observed spread")
    assert verdict.outcome == "inconclusive (too few seeds)"


def test_a_model_still_improving_makes_the_checks_undecided(tmp_path):
    kept = {"plain": (0.20, 0.25, 0.30), **dict.fromkeys(FAMILIES[1:], ATTENTION)}
    write_grid(tmp_path, kept, rising="plain")
    verdict = outcome(tmp_path)
    reason = "not converged: plain (seed 1 +5.00 / seed 2 +5.00 / seed 3 +5.00)"
    assert [f.why for _, f in verdict.findings] == [reason] * 2
    assert verdict.outcome == "inconclusive (not converged)"


def test_two_seeds_or_no_probe_are_inconclusive(tmp_path):
    write_grid(tmp_path / "a", {"plain": (0.2, 0.3), **dict.fromkeys(FAMILIES[1:], (0.7, 0.8))})
    assert outcome(tmp_path / "a").outcome.startswith("inconclusive")
    for family in FAMILIES:  # E1 runs without the probe (the synthetic scale records none)
        for seed in (1, 2, 3):
            write_run(tmp_path / "b" / f"{family}_{seed}", experiment="e1_attention",
                      variant=family, family=family, seed=seed, bleu=40.0)  # fmt: skip
    verdict = outcome(tmp_path / "b")
    assert verdict.findings[0][1].holds is None
    assert "needs the length probe" in verdict.findings[0][1].detail


def test_retention_is_the_long_bucket_over_the_whole_test_of_each_run(tmp_path):
    write_grid(tmp_path, {"plain": (0.25, 0.5, 0.75), "bahdanau": ATTENTION})
    runs, _ = find_runs(tmp_path)
    plain = next(v for v in Comparison(LENGTH_PROBE, runs).variants if v.label == "plain")
    assert retentions(plain, "81+") == pytest.approx([0.25, 0.5, 0.75])


def test_the_probe_report_is_written_beside_e1s_only_when_runs_have_the_probe(tmp_path):
    assert LENGTH_PROBE in readers("e1_attention")  # E8 reads them too, runs with its record
    write_grid(tmp_path / "runs", {"plain": (0.2, 0.25, 0.3), "bahdanau": ATTENTION})
    generated = generate_report(tmp_path / "runs", tmp_path / "out")
    assert {r.name for r in generated.reports} == {"e1_attention", "e1_length_probe"}
    probe = (tmp_path / "out" / "e1_length_probe" / "report.md").read_text()
    assert probe.startswith(f"# {LENGTH_PROBE.title}") and "Experiment `e1_attention`." in probe
    for plot in ("probe_bleu_by_length", "probe_output_length"):
        assert (tmp_path / "out" / "e1_length_probe" / f"{plot}.png").is_file()
    # the figures per join: BLEU, BLEU without the brevity penalty, output / reference length
    assert "## The probe per join: BLEU and output length" in probe
    assert "| model | figure | k=1 (12 / 11 words) | k=6 (65 / 70 words) |" in probe
    assert "| **plain** | BLEU / BP | 40.00 ± 0.00 | 27.18 ± 5.44 |" in probe
    assert "| **bahdanau** | output / reference length | 1.00 ± 0.00 | 0.50 ± 0.00 |" in probe
    assert "| **bahdanau** | output words | 11.0 ± 0.0 | 35.0 ± 0.0 |" in probe
    summary = json.loads((tmp_path / "out" / "e1_length_probe" / "verdict.json").read_text())
    assert summary["comparison"] == "e1_length_probe" and summary["experiment"] == "e1_attention"
    assert "e1_length_probe" in (tmp_path / "out" / "README.md").read_text()
    # E1's runs without the probe: E1's report only
    for seed in (1, 2, 3):
        write_run(tmp_path / "plain" / str(seed), experiment="e1_attention", variant="plain",
                  family="plain", seed=seed, bleu=40.0)  # fmt: skip
    generated = generate_report(tmp_path / "plain", tmp_path / "out2")
    assert [r.name for r in generated.reports] == ["e1_attention"]
    assert not (tmp_path / "out2" / "e1_length_probe").exists()
