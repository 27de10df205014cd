"""Test sets scored apart from the test split (pipeline/extra_tests.py, report/extra_tests.py):
a training run on the synthetic task records its extrapolation split under extra_tests, scored
like the test split, and the report shows it in a table of its own, never in the checks."""

from __future__ import annotations

import json

import pytest
from report_support import write_run
from sacrebleu.metrics import BLEU

from seq2seq_lab.pipeline.extra_tests import score_extra_test
from seq2seq_lab.record.results import EXTRA_TESTS
from seq2seq_lab.report.extra_tests import extra_test_rows, extra_test_splits
from seq2seq_lab.report.generate import generate_report
from seq2seq_lab.report.runs import find_runs
from seq2seq_lab.report.spec import Comparison
from seq2seq_lab.report.specs import own_specs


def test_an_extra_test_set_is_scored_as_sacrebleu_scores_it():
    sources = ["a b c d", "e f g h i j k l m n o p"]
    references = ["the cat sat on the mat", "a dog ran in the park today"]
    hypotheses = ["the cat sat on a mat", "a dog ran in the park"]
    record = score_extra_test(sources, hypotheses, references)
    assert record["bleu"] == pytest.approx(BLEU().corpus_score(hypotheses, [references]).score)
    assert record["sentences"] == 2 and record["source_words"] == 8.0
    assert record["length_ratio"] == pytest.approx(12 / 13)
    assert set(record["bleu_by_length"]) == {"1-10", "11-20"}


def _with_extrapolation(path, bleu: float) -> None:
    results = json.loads((path / "results.json").read_text())
    results[EXTRA_TESTS] = {
        "extrapolation": {
            "bleu": bleu,
            "sentences": 500,
            "source_words": 38.0,
            "length_ratio": 0.9,
        }  # fmt: skip
    }
    (path / "results.json").write_text(json.dumps(results))


def test_the_report_shows_each_variant_beside_its_test_bleu(tmp_path):
    for seed, (plain, attention) in enumerate([(10.0, 60.0), (14.0, 62.0)], start=1):
        for family, bleu in (("plain", plain), ("bahdanau", attention)):
            run = write_run(tmp_path / f"{family}{seed}", experiment="e1_attention",
                            variant=family, family=family, seed=seed, bleu=40.0)  # fmt: skip
            _with_extrapolation(run, bleu)
    runs, _ = find_runs(tmp_path)
    comparison = Comparison(own_specs()["e1_attention"], runs)
    assert extra_test_splits(comparison) == ["extrapolation"]
    header, rows = extra_test_rows(comparison, "extrapolation")
    assert header[:4] == ["model", "seeds", "extrapolation BLEU", "test BLEU"]
    by_model = {row[0]: row for row in rows}
    assert by_model["**plain**"][1:5] == ["2", "12.00 ± 2.83", "40.00 ± 0.00", "0.30 ± 0.07"]
    generate_report(tmp_path, tmp_path / "out")
    report = (tmp_path / "out" / "e1_attention" / "report.md").read_text()
    assert "## The extrapolation set, apart from the test split" in report
    assert "500 sentences of 38.0 source words" in report


def test_no_section_without_the_record(tmp_path):
    write_run(tmp_path / "a", experiment="e1_attention", variant="plain", family="plain")
    generate_report(tmp_path, tmp_path / "out")
    report = (tmp_path / "out" / "e1_attention" / "report.md").read_text()
    assert "apart from the test split" not in report
