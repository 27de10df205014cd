"""Reports made again from a report's runs.csv (report/run_table.py): every value the verdict
reads survives runs -> report -> runs.csv -> runs, the CLI's --scale for tables written before
the scale column, a one-line error for a CSV that is not a run table, and the PNGs an earlier
report drew kept (not redrawn, not removed) when the report is made again in place."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from report_support import metrics_rows, write_run

from seq2seq_lab.report.__main__ import main
from seq2seq_lab.report.generate import generate_report
from seq2seq_lab.report.run_table import NO_COMMAND, parse_value, read_run_table
from seq2seq_lab.report.runs import find_runs
from seq2seq_lab.report.specs import spec_for

CONFIG = {
    "model.attention.score": "general",
    "optim.betas": [0.9, 0.999],
    "optim.eps": 1e-8,
    "trainer.deterministic": True,
    "trainer.gradient_clip_val": 1.0,
    "trainer.plugins": [{"_target_": "x.AtomicCheckpointIO"}],
    "logger.csv.save_dir": "${paths.output_dir}",
    "seeds": "1,2,3",
    "trainer.precision": "32-true",
    "callbacks.early_stopping": None,
}


def e1_runs(root: Path) -> Path:
    """seq2seq and Bahdanau, two seeds each (Bahdanau better and with a heatmap), a Transformer
    that diverged untested and a Luong job that failed; one sweep directory."""
    root.mkdir(parents=True)
    (root / "multirun.yaml").write_text("hydra: {}\n")
    jobs = [
        ("plain", 1, "completed", 20.0, 3.0),
        ("plain", 2, "completed", 21.0, 2.5),
        ("bahdanau", 1, "completed", 30.0, 0.2),
        ("bahdanau", 2, "completed", 31.5, 0.0),
        ("transformer", 1, "diverged", None, None),
        ("luong", 1, "failed", None, None),
    ]
    for num, (family, seed, status, bleu, gain) in enumerate(jobs):
        write_run(
            root / str(num),
            experiment="e1_attention",
            variant=family,
            family=family,
            seed=seed,
            status=status,
            config=CONFIG,
            bleu=bleu,
            tested=bleu is not None,
            metrics=metrics_rows(20, blow_up=status == "diverged"),
            heatmap=family == "bahdanau",
            overrides=[f"model={family}", f"seed={seed}", "experiment=e1_attention"],
            validations=None if gain is None else [[100, 10.0], [300, 20.0], [400, 20.0 + gain]],
        )
    return root


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """(the runs, the report's directory) of a report of ``e1_runs``."""
    root = e1_runs(tmp_path_factory.mktemp("table") / "sweep")
    generated = generate_report(root, root.parent / "report")
    assert not generated.failed
    return find_runs(root)[0], root.parent / "report" / "e1_attention"


def test_values_read_back_as_the_csv_wrote_them():
    assert parse_value("True") is True
    assert parse_value("1e-08") == 1e-08
    assert parse_value("[0.9, 0.999]") == [0.9, 0.999]
    assert parse_value("1400") == 1400 and isinstance(parse_value("1400"), int)
    assert parse_value("0.0") == 0.0 and isinstance(parse_value("0.0"), float)
    for text in ("${paths.output_dir}", "1,2,3", "32-true", "seq2seq_lab.models.X", "'a'"):
        assert parse_value(text) == text


def test_a_round_trip_keeps_every_value_the_verdict_reads(reported):
    runs, directory = reported
    table = {(r.variant, r.seed): r for r in read_run_table(directory / "runs.csv", None)}
    assert len(table) == len(runs) == 6
    spec = spec_for("e1_attention")
    for run in runs:
        back = table[(run.variant, run.seed)]
        assert (back.status, back.finished, back.experiment) == (
            run.status,
            run.finished,
            "e1_attention",
        )
        assert back.family == run.family and back.scale == run.scale == "synthetic"
        for metric in ("bleu", "chrf", "ter", "ppl"):
            assert back.score(metric) == pytest.approx(run.score(metric))
        assert back.late_val_gain == pytest.approx(run.late_val_gain)
        assert back.steps == run.steps
        assert back.timing("train_seconds") == run.timing("train_seconds")
        assert spec.role(back) == spec.role(run)
        for key, value in CONFIG.items():
            assert back.config_value(key) == value, key
        assert back.config_value("model._target_") == run.config_value("model._target_")
        # what only a run directory holds is absent, and reads as missing
        assert back.buckets() == {} and back.test_lines("hypotheses") is None
        assert back.metrics == [] and back.attention_heatmap() is None
        assert back.validation_diagnostics() == [] and back.grad_norms_init() is None
        # the grid setting of its variant (the check of the grid's settings reads it)
        assert back.overrides == [f"model={run.variant}", f"seed={run.seed}"]
    assert table[("transformer", 1)].test == {}
    assert table[("luong", 1)].results["error"] == "RuntimeError: synthetic failure"
    assert table[("transformer", 1)].results["status_reason"].startswith("non-finite loss")


def test_a_run_of_no_known_grid_has_no_overrides(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("run,variant,seed,status,test.bleu,config.model.heads\n0,v,1,completed,,4\n")
    (run,) = read_run_table(path)
    assert run.overrides == [] and run.experiment is None and run.test == {}
    assert run.config_value("model.heads") == 4 and run.seed == 1 and run.score("bleu") is None


def test_the_report_of_a_table_is_the_report_of_its_runs(reported, tmp_path):
    runs, directory = reported
    generated = generate_report(directory / "runs.csv", tmp_path / "again")
    (report,) = generated.reports
    first = json.loads((directory / "verdict.json").read_text())
    again = json.loads((report.path.parent / "verdict.json").read_text())
    for key in ("verdict", "scale", "seeds"):
        assert again[key] == first[key]
    assert [v["bleu_mean"] for v in again["variants"]] == [
        v["bleu_mean"] for v in first["variants"]
    ]
    # the rows of the table written again are those read
    with open(directory / "runs.csv", newline="") as f:
        before = list(csv.DictReader(f))
    with open(report.path.parent / "runs.csv", newline="") as f:
        after = list(csv.DictReader(f))
    assert [r["run"] for r in after] == [r["run"] for r in before]
    columns = [c for c in before[0] if any(r[c] for r in before)]
    assert [[r.get(c, "") for c in columns] for r in after] == [
        [r[c] for c in columns] for r in before
    ]
    # nothing to draw from, no earlier report there: the plots are notes, no PNG is written
    assert not list(report.path.parent.rglob("*.png"))
    text = report.path.read_text()
    assert NO_COMMAND in text and "not drawn (the report was made from a run table" in text


def test_cli_scale_option_for_a_table_without_the_scale_column(reported, tmp_path):
    _, directory = reported
    with open(directory / "runs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    old = tmp_path / "old" / "runs.csv"
    old.parent.mkdir()
    columns = [c for c in rows[0] if c != "scale"]
    with open(old, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    command = [sys.executable, "-m", "seq2seq_lab.report", str(old), "--scale", "cpu"]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "out")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "e1_attention: 6 runs" in done.stdout
    summary = json.loads((tmp_path / "out" / "e1_attention" / "verdict.json").read_text())
    # the scale given by its old name (seq2seq_lab/renames.py) is reported by its name today
    assert summary["scale"] == "synthetic"
    with open(tmp_path / "out" / "e1_attention" / "runs.csv", newline="") as f:
        assert {r["scale"] for r in csv.DictReader(f)} == {"synthetic"}


def test_scale_is_an_error_but_for_a_table_and_must_agree_with_it(reported, tmp_path, capsys):
    runs, directory = reported
    sweep = runs[0].path.parent
    assert main([str(sweep), "--scale", "cpu", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "run table" in err and "\n" not in err
    assert main([str(directory / "runs.csv"), "--scale", "real", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "records scale 'synthetic', not the 'real' given" in err and "\n" not in err


def test_a_csv_that_is_not_a_run_table_is_a_one_line_error(tmp_path, capsys):
    bad = tmp_path / "metrics.csv"
    bad.write_text("epoch,step,train/loss\n0,1,2.0\n")
    assert main([str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {bad}: not a run table") and "\n" not in err
    assert "variant, seed, status" in err
    assert not (tmp_path / "out").exists()


def test_pngs_are_kept_when_the_report_is_made_again_from_its_table(reported, tmp_path):
    _, directory = reported
    shutil.copytree(directory, tmp_path / "e1_attention")
    shutil.copytree(directory.parent / "heatmaps", tmp_path / "heatmaps")  # the folder's store
    table = tmp_path / "e1_attention" / "runs.csv"
    images = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*.png")}
    assert Path("e1_attention/loss_curves.png") in images
    (heatmap,) = [image for image in images if image.parts[0] == "heatmaps"]
    earlier = (tmp_path / "e1_attention" / "report.md").read_text()

    for _ in range(2):  # in place (the default output), twice: nothing drifts
        generated = generate_report(table)
        assert not generated.failed and generated.index == tmp_path / "README.md"
        kept = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*.png")}
        assert kept == images
        text = (tmp_path / "e1_attention" / "report.md").read_text()
        for image in ("loss_curves.png", f"../{heatmap.as_posix()}"):
            assert f"]({image})" in text
        assert "**bahdanau** (seed 1, `attention/step0000010/val0.png`)" in text
        # the earlier report's sweep command is shown as it was
        command = earlier.partition("```bash\n")[2].partition("\n```")[0]
        assert command in text and text.count("python -m seq2seq_lab.train") == 1
    with open(table, newline="") as f:
        assert len(list(csv.DictReader(f))) == 6
