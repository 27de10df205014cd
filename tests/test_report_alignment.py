"""The reports' table of where the attention looks (report/checks.py): one row per
finished run with the record, per seed, and a plain note when no run has it."""

from __future__ import annotations

import json
from pathlib import Path

from report_support import write_run

from seq2seq_lab.analysis.alignment_record import ALIGNMENT, AlignmentFigures, alignment_record
from seq2seq_lab.report.checks import ALIGNMENT_TABLE, alignment_rows
from seq2seq_lab.report.generate import generate_report
from seq2seq_lab.report.runs import find_runs
from seq2seq_lab.report.spec import Comparison
from seq2seq_lab.report.specs import own_specs

SPECS = own_specs()

ALIGNED = AlignmentFigures(0.47, 0.56, 0.07, 0.09, 0.60, tokens=1300, sentences=100)
COLLAPSED = AlignmentFigures(0.0, 1.0, 0.93, 0.95, 0.15, tokens=1300, sentences=100)


def run_with(path: Path, family: str, seed: int, figures: AlignmentFigures | None, **kw) -> None:
    write_run(path, experiment="e1_attention", variant=family, family=family, seed=seed,
              bleu=30.0 + seed, **kw)  # fmt: skip
    if figures is not None:
        results = json.loads((path / "results.json").read_text())
        results[ALIGNMENT] = alignment_record(figures, "test")
        (path / "results.json").write_text(json.dumps(results))


def test_one_row_per_run_with_the_record_in_seed_order(tmp_path):
    run_with(tmp_path / "a", "luong", 2, COLLAPSED)
    run_with(tmp_path / "b", "luong", 1, ALIGNED)
    run_with(tmp_path / "c", "luong", 3, COLLAPSED, status="interrupted")  # unfinished: no row
    run_with(tmp_path / "d", "plain", 1, None)  # no attention, no record
    runs, _ = find_runs(tmp_path)
    header, rows = alignment_rows(Comparison(SPECS["e1_attention"], runs))
    assert header == [
        "model", "seed", "test BLEU", "H / log S", "max weight", "on the last two",
        "mass on the last two", "distinct per token",
    ]  # fmt: skip
    assert rows == [
        ["**luong**", "1", "31.00", "0.470", "0.560", "0.070", "0.090", "0.600"],
        ["**luong**", "2", "32.00", "0.000", "1.000", "0.930", "0.950", "0.150"],
    ]


def test_a_run_recorded_before_a_figure_existed_shows_a_dash_for_it(tmp_path):
    run_with(tmp_path / "a", "luong", 1, ALIGNED)
    results = json.loads((tmp_path / "a" / "results.json").read_text())
    del results[ALIGNMENT]["end_mass"]
    (tmp_path / "a" / "results.json").write_text(json.dumps(results))
    runs, _ = find_runs(tmp_path)
    _, rows = alignment_rows(Comparison(SPECS["e1_attention"], runs))
    assert rows == [["**luong**", "1", "31.00", "0.470", "0.560", "0.070", "-", "0.600"]]


def test_recurrent_reports_show_the_table_or_say_the_runs_lack_it(tmp_path):
    for name in ("e1_attention", "e2_reversal", "e3_scores", "e7_cells"):
        assert ALIGNMENT_TABLE in SPECS[name].tables, name
    for seed in (1, 2, 3):
        run_with(tmp_path / "with" / str(seed), "bahdanau", seed, ALIGNED)
        run_with(tmp_path / "without" / str(seed), "bahdanau", seed, None)
    generate_report(tmp_path / "with", tmp_path / "out")
    report = (tmp_path / "out" / "e1_attention" / "report.md").read_text()
    assert "## Where the attention looks" in report
    assert "| **bahdanau** | 3 | 33.00 | 0.470 | 0.560 | 0.070 | 0.090 | 0.600 |" in report
    generate_report(tmp_path / "without", tmp_path / "out2")
    report = (tmp_path / "out2" / "e1_attention" / "report.md").read_text()
    section = report.split("## Where the attention looks", 1)[1]
    assert section.lstrip().startswith("_Not shown: the runs lack the data this table needs._")
