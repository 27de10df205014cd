"""A committed grid's hypotheses and metrics histories, bzip2'd
(seq2seq_lab/record/compressed_outputs.py): the same lines read back, the same bytes every time,
only finished runs touched, and an older run's gzip'd files re-compressed."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path

from seq2seq_lab.data import test_set
from seq2seq_lab.record import compressed_outputs
from seq2seq_lab.report.runs import find_runs

# an empty line, a U+2028 inside a sentence (not a line end), repeated spaces
HYPOTHESES = ["a dog .", "", "two  cats\u2028play", "three birds"]
# as Lightning's CSVLogger writes it: sparse rows, \r\n line ends (the csv module's default)
METRICS = "epoch,step,train/loss,val/bleu\r\n0,49,4.75,\r\n0,99,,12.5\r\n1,149,3.25,\r\n"


def a_run(root: Path, name: str, status: str | None, record: str = "results.json") -> Path:
    run = root / name
    run.mkdir(parents=True)
    if status is not None:
        (run / record).write_text(json.dumps({"status": status}), "utf-8")
    for split in ("test", "extrapolation"):
        (run / f"hypotheses.{split}.txt").write_text(test_set.scored_text(HYPOTHESES), "utf-8")
    (run / "length_probe").mkdir()
    (run / "length_probe" / "join-2.txt").write_text(test_set.scored_text(HYPOTHESES), "utf-8")
    (run / "csv").mkdir()
    (run / "csv" / "metrics.csv").write_bytes(METRICS.encode("utf-8"))
    return run


def test_finished_runs_are_compressed_and_read_back_line_for_line(tmp_path):
    done = a_run(tmp_path / "runs", "0", "completed")
    diverged = a_run(tmp_path / "runs", "1", "diverged")
    running = a_run(tmp_path / "runs", "2", None)  # still training: no record yet
    interrupted = a_run(tmp_path / "runs", "3", "interrupted")
    evaluated = a_run(tmp_path / "runs", "4", "completed", "eval_results.json")  # seq2seq_lab.eval
    assert compressed_outputs.main([str(tmp_path / "runs")]) == 0
    for run in (done, diverged, evaluated):
        assert sorted(p.name for p in run.glob("hypotheses.*")) == [
            "hypotheses.extrapolation.txt.bz2",
            "hypotheses.test.txt.bz2",
        ]
        assert test_set.read_test_lines(run, "hypotheses", "test") == HYPOTHESES
        assert test_set.read_test_lines(run, "hypotheses", "extrapolation") == HYPOTHESES
        # the length probe's joins too (their rescoring reads either form)
        assert [p.name for p in (run / "length_probe").iterdir()] == ["join-2.txt.bz2"]
        join = run / "length_probe" / "join-2.txt"
        assert compressed_outputs.read_kept_lines(join) == HYPOTHESES
        # the metrics history, byte for byte
        assert [p.name for p in (run / "csv").iterdir()] == ["metrics.csv.bz2"]
        assert compressed_outputs.read_kept_text(run / "csv" / "metrics.csv") == METRICS
    for run in (running, interrupted):
        assert not list(run.rglob("*.bz2"))
        assert test_set.read_test_lines(run, "hypotheses", "test") == HYPOTHESES
    assert compressed_outputs.read_kept_lines(tmp_path / "nothing.txt") is None
    assert compressed_outputs.read_kept_text(tmp_path / "nothing.csv") is None


def test_a_sweeps_runs_a_level_down_are_compressed_and_set_aside_ones_are_not(tmp_path):
    # run_real.sh's SWEEP=seed4 puts its jobs in runs/seed4/<job>/; the report reads them there
    nested = a_run(tmp_path / "runs" / "seed4", "0", "completed")
    set_aside = a_run(
        tmp_path / "runs" / "1" / "abandoned" / "2026-12-01_00-00-00", "x", "completed"
    )
    assert compressed_outputs.main([str(tmp_path / "runs")]) == 0
    assert [p.name for p in (nested / "csv").iterdir()] == ["metrics.csv.bz2"]
    assert (nested / "hypotheses.test.txt.bz2").is_file()
    assert not list(set_aside.rglob("*.bz2"))


def test_a_report_reads_a_compressed_metrics_history_as_the_plain_one(tmp_path):
    a_run(tmp_path / "runs", "0", "completed")
    (plain,), _ = find_runs(tmp_path / "runs")
    before = plain.metrics
    assert [row["step"] for row in before] == [49.0, 99.0, 149.0]
    assert plain.series("val/bleu") == ([99.0], [12.5])
    assert compressed_outputs.compress_finished_runs(tmp_path / "runs")
    (compressed,), _ = find_runs(tmp_path / "runs")
    assert not (compressed.path / "csv" / "metrics.csv").exists()
    assert compressed.metrics == before


def test_the_same_text_gives_the_same_bytes(tmp_path):
    first = a_run(tmp_path / "a", "0", "completed")
    compressed_outputs.compress_finished_runs(tmp_path / "a")
    again = a_run(tmp_path / "b", "0", "completed")
    compressed_outputs.compress_finished_runs(tmp_path / "b")
    name = "hypotheses.test.txt.bz2"
    assert (first / name).read_bytes() == (again / name).read_bytes()  # no time, no file name
    assert bz2.decompress((first / name).read_bytes()) == test_set.scored_text(HYPOTHESES).encode(
        "utf-8"
    )
    assert compressed_outputs.compress_finished_runs(tmp_path / "a") == []  # nothing left to do


def test_an_older_runs_gzip_is_read_and_then_recompressed(tmp_path):
    run = a_run(tmp_path / "runs", "0", "completed")
    text = test_set.scored_text(HYPOTHESES).encode("utf-8")
    for path in [*run.glob("hypotheses.*.txt"), run / "length_probe" / "join-2.txt"]:
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(text, mtime=0))
        path.unlink()  # as a run compressed before bzip2 left it
    assert test_set.read_test_lines(run, "hypotheses", "test") == HYPOTHESES
    assert len(compressed_outputs.compress_finished_runs(tmp_path / "runs")) == 4  # and metrics
    assert not list(run.rglob("*.gz"))
    assert bz2.decompress((run / "hypotheses.test.txt.bz2").read_bytes()) == text
    assert compressed_outputs.read_kept_lines(run / "length_probe" / "join-2.txt") == HYPOTHESES
