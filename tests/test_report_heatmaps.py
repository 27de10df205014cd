"""The heatmap store of one output folder: one copy per run whichever reports show it, kept
while a report shows it, and the copies of reports written before the store moved into it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

from report_support import write_run

from seq2seq_lab.report.heatmaps import copy_heatmaps, image_name, kept_heatmaps
from seq2seq_lab.report.runs import find_runs


def comparison(runs, label="bahdanau"):
    """What the store reads of a comparison: its variants' labels and runs."""
    return SimpleNamespace(variants=[SimpleNamespace(label=label, runs=list(runs))])


def report(out: Path, name: str, runs, label="bahdanau"):
    """One report's turn, as ``build_experiment`` takes it: the figures, then report.md."""
    directory = out / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "report.md").unlink(missing_ok=True)
    heatmaps = copy_heatmaps(comparison(runs, label), directory)
    (directory / "report.md").write_text("a report\n")
    return heatmaps


def bahdanau_run(out: Path, name: str):
    """The runs of ``out/runs``: one Bahdanau run ``name`` with an attention image."""
    kind = {"experiment": "e1_attention", "variant": "bahdanau", "family": "bahdanau"}
    write_run(out / "runs" / name, **kind, heatmap=True)
    return find_runs(out / "runs")[0]


def test_a_run_gets_one_name_in_its_output_folder(tmp_path):
    assert image_name(tmp_path / "runs" / "3", tmp_path) == "runs-3.png"
    assert image_name(tmp_path / "sweep" / "0", tmp_path / "report") == "up-sweep-0.png"


def test_reports_share_one_copy_kept_while_one_shows_it(tmp_path):
    out = tmp_path / "results"
    runs = bahdanau_run(out, "0")
    image = runs[0].attention_heatmap()

    (first,) = report(out, "e1_attention", runs)
    (second,) = report(out, "e8_decoding", runs, label="Bahdanau")
    assert first.path == second.path == out / "heatmaps" / "runs-0.png"
    assert first.path.read_bytes() == image.read_bytes()
    assert sorted(p.name for p in (out / "heatmaps").iterdir()) == ["runs-0.png", "sources.json"]
    sources = json.loads((out / "heatmaps" / "sources.json").read_text())
    assert sources == {
        "runs-0.png": {
            "reports": {"e1_attention": "bahdanau", "e8_decoding": "Bahdanau"},
            "run": "runs/0",
            "seed": 1,
            "source": image.relative_to(runs[0].path).as_posix(),
        }
    }

    # a clone without the run's images: the copy is kept, attributed to the run
    image.unlink()
    (kept,) = report(out, "e1_attention", runs)
    assert kept.kept and kept.path == first.path and kept.seed == 1
    assert kept.source == first.source and kept.run == "runs/0"
    # a report made from its run table shows what the store records for it, by its label
    (table,) = kept_heatmaps(comparison([], "Bahdanau"), out / "e8_decoding")
    assert (table.variant, table.path, table.seed) == ("Bahdanau", first.path, 1)

    # one report stops showing it: the copy stays for the other; with both, it goes
    assert report(out, "e1_attention", []) == []
    assert first.path.is_file()
    assert report(out, "e8_decoding", []) == []
    assert not (out / "heatmaps").exists()


def test_a_report_that_is_gone_shows_nothing(tmp_path):
    out = tmp_path / "results"
    runs = bahdanau_run(out, "0")
    report(out, "e1_length_probe", runs)
    report(out, "e1_attention", runs)
    (out / "e1_length_probe" / "report.md").unlink()  # a comparison no longer made here
    report(out, "e1_attention", [])
    assert not (out / "heatmaps").exists()


def test_the_copies_of_a_report_written_before_the_store_move_into_it(tmp_path):
    out = tmp_path / "results"
    runs = bahdanau_run(out, "5")
    for image in (out / "runs").rglob("*.png"):  # a clone that did not make the run
        image.unlink()
    own = out / "e1_attention" / "heatmaps"
    own.mkdir(parents=True)
    (own / "bahdanau.png").write_bytes(b"\x89PNG\r\n\x1a\nthe earlier copy")
    legacy = {"variant": "bahdanau", "run": "../runs/5", "seed": 1, "source": "attention/a.png"}
    (own / "sources.json").write_text(json.dumps({"bahdanau.png": legacy}))

    (heatmap,) = report(out, "e1_attention", runs)
    assert heatmap.kept and heatmap.path == out / "heatmaps" / "runs-5.png"
    assert (heatmap.seed, heatmap.source, heatmap.run) == (1, "attention/a.png", "runs/5")
    assert heatmap.path.read_bytes() == b"\x89PNG\r\n\x1a\nthe earlier copy"
    assert not own.exists()


def test_the_copy_is_written_once_and_again_when_the_run_image_changes(tmp_path):
    out = tmp_path / "results"
    runs = bahdanau_run(out, "0")
    image = runs[0].attention_heatmap()
    (first,) = report(out, "e1_attention", runs)
    written = first.path.stat().st_mtime_ns
    os.utime(first.path, ns=(written - 10**9, written - 10**9))  # older than any rewrite

    report(out, "e8_decoding", runs)  # the same run: the store's copy is already it
    assert first.path.stat().st_mtime_ns == written - 10**9

    image.write_bytes(image.read_bytes() + b"a redrawn image")
    (again,) = report(out, "e1_attention", runs)
    assert again.path.read_bytes() == image.read_bytes()
