"""Recorded paths name no directory of the machine (seq2seq_lab/record/portable_paths.py): the rule,
results.json of a real run, and a report of runs recorded with absolute paths."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import compose_config, tiny_overrides
from report_support import corpus, translate, write_run

from seq2seq_lab.checkout import REPOSITORY
from seq2seq_lab.pipeline.training import train
from seq2seq_lab.record.portable_paths import portable_path, portable_record, relative
from seq2seq_lab.report.generate import generate_report

SIBLING_DATA = REPOSITORY.parent / "shared" / "data" / "multi30k"  # beside the checkout


def strings(value: Any) -> list[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [str(k), *strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


# ---------------------------------------------------------------------------- the rule
@pytest.fixture
def places(tmp_path) -> dict[str, Path]:
    work = tmp_path / "work"
    return {
        "repo": work / "repo",
        "run": work / "repo" / "multirun" / "e1" / "0",
        "cache": tmp_path / "home" / ".cache" / "seq2seq-lab",
        "elsewhere": tmp_path / "mnt" / "data",
    }


def name(path: Path | str, places: dict[str, Path], key: str | None = "data.root") -> str:
    return portable_path(
        str(path),
        key,
        run_dirs=[places["run"]],
        cache_dirs=[places["cache"]],
        repository=places["repo"],
    )


def test_the_run_directory_and_the_cache_are_named_by_their_config_keys(places):
    assert name(places["run"], places) == "${paths.output_dir}"
    assert name(places["run"] / "checkpoints", places) == "${paths.output_dir}/checkpoints"
    assert name(places["cache"], places) == "${paths.cache_dir}"
    assert name(places["cache"] / "spm" / "m.model", places) == "${paths.cache_dir}/spm/m.model"


def test_paths_in_or_beside_the_repository_are_relative_to_its_root(places):
    repo = places["repo"]
    assert name(repo / "outputs" / "train" / "x", places) == "outputs/train/x"
    assert name(repo, places) == "."
    assert name(repo.parent / "shared" / "data" / "multi30k", places) == "../shared/data/multi30k"
    # a sibling whose name starts with the repository's is beside it, not in it
    assert name(repo.parent / "repo-old" / "x", places) == "../repo-old/x"
    # a job's directory is not under its neighbour's whose name it starts with
    assert name(places["run"].parent / "01", places) == "multirun/e1/01"


def test_a_path_anywhere_else_is_named_by_its_config_key_or_its_own_name(places):
    assert name(places["elsewhere"] / "multi30k", places) == "${data.root}"
    assert name(places["elsewhere"] / "multi30k", places, key=None) == "multi30k"


def test_relative_paths_and_other_text_are_kept_as_given(places):
    for text in ("../shared/data/multi30k", "outputs/x", "val/bleu", "post", ""):
        assert name(text, places) == text


def test_a_directory_named_through_a_symbolic_link_is_recognised(places, tmp_path):
    places["run"].mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(places["run"])
    assert name(link / "csv", places) == "${paths.output_dir}/csv"


def test_a_link_is_relative_posix_and_sees_through_symbolic_links(tmp_path):
    run = tmp_path / "results" / "runs" / "3"
    report = tmp_path / "results" / "e3"
    run.mkdir(parents=True)
    report.mkdir()
    assert relative(run, report) == "../runs/3"
    assert relative(report / "heatmaps" / "a.png", report) == "heatmaps/a.png"
    (tmp_path / "alias").symlink_to(tmp_path / "results")
    assert relative(tmp_path / "alias" / "runs" / "3", report) == "../runs/3"


def test_a_record_names_every_path_by_where_it_is(tmp_path):
    run_dir = tmp_path / "sweep" / "3"
    cache = tmp_path / "cache"
    record = {
        "status": "completed",
        "run_dir": str(run_dir),
        "overrides": [
            f"data.root={SIBLING_DATA}",
            f"+paths.cache_dir={cache}",
            f"ckpt_path={tmp_path / 'old' / 'last.ckpt'}",
        ],
        "config": {
            "paths": {"output_dir": str(run_dir), "cache_dir": str(cache)},
            "data": {"root": str(SIBLING_DATA), "cache_dir": str(cache)},
            "trainer": {"default_root_dir": str(run_dir)},
            "ckpt_path": str(tmp_path / "old" / "last.ckpt"),
            "tags": ["e1"],
        },
        "training": {"best_checkpoint": str(run_dir / "checkpoints" / "best.ckpt"), "steps": 4},
        "error": f"FileNotFoundError: {tmp_path}",  # free text: kept as it is
    }
    portable = portable_record(record)
    assert list(portable) == list(record)
    assert portable["run_dir"] == "${paths.output_dir}"
    assert portable["overrides"] == [
        "data.root=../shared/data/multi30k",
        "+paths.cache_dir=${paths.cache_dir}",
        "ckpt_path=${ckpt_path}",
    ]
    assert portable["config"] == {
        "paths": {"output_dir": "${paths.output_dir}", "cache_dir": "${paths.cache_dir}"},
        "data": {"root": "../shared/data/multi30k", "cache_dir": "${paths.cache_dir}"},
        "trainer": {"default_root_dir": "${paths.output_dir}"},
        "ckpt_path": "${ckpt_path}",
        "tags": ["e1"],
    }
    assert portable["training"] == {
        "best_checkpoint": "${paths.output_dir}/checkpoints/best.ckpt",
        "steps": 4,
    }
    assert portable["error"] == record["error"]
    assert portable_record(portable) == portable  # already portable: unchanged
    assert record["run_dir"] == str(run_dir)  # the record given is left alone


# ---------------------------------------------------------------------------- results.json
@pytest.mark.slow
def test_a_real_runs_results_json_holds_no_absolute_path(tmp_path, tmp_path_factory, cache_dir):
    run_dir = tmp_path / "run"
    overrides = tiny_overrides("bahdanau", f"paths.cache_dir={cache_dir}")
    results = train(compose_config("train", overrides, run_dir))
    assert results["status"] == "completed"
    on_disk = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    temporary = str(tmp_path_factory.getbasetemp())  # holds the run and the cache
    leaks = [s for s in strings(on_disk) if s.startswith("/") or temporary in s]
    assert leaks == []
    assert on_disk["run_dir"] == "${paths.output_dir}"
    assert on_disk["config"]["data"]["cache_dir"] == "${paths.cache_dir}"
    assert f"paths.cache_dir={cache_dir}" in results["overrides"]  # in memory: the real one
    assert "paths.cache_dir=${paths.cache_dir}" in on_disk["overrides"]
    # a recorded name still leads to the file, from the run's directory
    best = on_disk["training"]["best_checkpoint"]
    assert (run_dir / best.removeprefix("${paths.output_dir}/")).is_file()


# ---------------------------------------------------------------------------- the report
def old_sweep(root: Path, cache: Path) -> None:
    """An E1 sweep whose results.json name this machine's directories (as written before
    portable paths): 2 families x 2 seeds, with test texts and a heatmap each."""
    root.mkdir(parents=True)
    (root / "multirun.yaml").write_text("hydra: {}\n")
    sources, references = corpus(n=60)
    jobs = [(f, s) for f in ("plain", "bahdanau") for s in (1, 2)]
    for num, (family, seed) in enumerate(jobs):
        run_dir = write_run(
            root / str(num),
            experiment="e1_attention",
            variant=family,
            family=family,
            seed=seed,
            texts=(sources, references, translate(references, 0.3, seed=seed)),
            heatmap=True,
        )
        record = json.loads((run_dir / "results.json").read_text())
        absolute = str(run_dir.absolute())
        record["run_dir"] = absolute
        record["overrides"] = [f"model={family}", f"seed={seed}", f"data.root={SIBLING_DATA}"]
        record["overrides"].append(f"paths.cache_dir={cache}")
        record["config"]["paths"] = {"output_dir": absolute, "cache_dir": str(cache)}
        record["config"]["data"] = {"root": str(SIBLING_DATA), "cache_dir": str(cache)}
        record["config"]["trainer"]["default_root_dir"] = absolute
        record["config"]["callbacks"] = {"model_checkpoint": {"dirpath": f"{absolute}/checkpoints"}}
        record["config"]["logger"] = {"csv": {"save_dir": absolute}}
        record["training"]["best_checkpoint"] = f"{absolute}/checkpoints/best.ckpt"
        (run_dir / "results.json").write_text(json.dumps(record))  # not through write_results


def test_a_report_of_runs_recorded_with_absolute_paths_names_none(tmp_path):
    sweep = (tmp_path / "multirun" / "e1").absolute()  # given absolute on the command line
    old_sweep(sweep, cache=tmp_path / "cache")
    assert str(tmp_path) in (sweep / "0" / "results.json").read_text()
    generated = generate_report(sweep, tmp_path / "report")
    assert generated.failed == {}
    (report,) = generated.reports
    written = [report.path, report.path.parent / "runs.csv", generated.index]
    for path in written:
        text = path.read_text(encoding="utf-8")
        for machine in (str(tmp_path), str(SIBLING_DATA), os.path.realpath(tmp_path)):
            assert machine not in text, f"{path.name} names {machine}"
    with open(report.path.parent / "runs.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4
    for row in rows:
        assert row["config.paths.output_dir"] == "${paths.output_dir}"
        assert row["config.trainer.default_root_dir"] == "${paths.output_dir}"
        assert row["config.callbacks.model_checkpoint.dirpath"] == "${paths.output_dir}/checkpoints"
        assert row["config.logger.csv.save_dir"] == "${paths.output_dir}"
        assert row["config.paths.cache_dir"] == "${paths.cache_dir}"
        assert row["config.data.root"] == "../shared/data/multi30k"
    markdown = report.path.read_text(encoding="utf-8")
    assert "data.root=../shared/data/multi30k" in markdown  # the rebuilt command
    assert "# 4 runs in e1" in markdown  # the sweep given absolute: its name
    assert "differ in more than the seed" not in markdown  # each run's own dir is alike
    # the runs' files were still found where they lie: test outputs and heatmaps
    assert report.assessment.differences
    assert all(d.test_sampling for d in report.assessment.differences)
    assert len(report.figures.heatmaps) == 2
