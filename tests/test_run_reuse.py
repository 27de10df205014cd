"""A resumable queue reuses another grid's identical run instead of training it again
(seq2seq_lab/record/run_reuse.py): only when the training identity is equal and the run measured what
the job would, relabelled as the job, and with what training it again would have given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import compose_config, tiny_overrides
from report_support import write_run

from seq2seq_lab.added_settings import with_added_settings
from seq2seq_lab.checkout import REPOSITORY
from seq2seq_lab.pipeline.training import train
from seq2seq_lab.record.run_reuse import job_identity, training_identity
from seq2seq_lab.renames import current, current_override
from seq2seq_lab.report.markdown import reused_runs
from seq2seq_lab.report.runs import find_runs

pytestmark = pytest.mark.slow

BUDGET = ("trainer.max_steps=3", "seed=1")


def run(run_dir: Path, cache_dir: Path, *overrides: str) -> dict:
    cfg = compose_config(
        "train", tiny_overrides("bahdanau", *BUDGET, *overrides), run_dir, cache_dir
    )
    return train(cfg)


def job(run_dir: Path, cache_dir: Path, pool: Path, *overrides: str) -> dict:
    """A queue job of grid "dst" that may reuse the runs of ``pool``."""
    return run(run_dir, cache_dir, "experiment_name=dst", "variant=mine", "resume=true",
               f"reuse_from=[{pool}]", *overrides)  # fmt: skip


@pytest.fixture(scope="module")
def source(tmp_path_factory, cache_dir) -> Path:
    """A finished run of another grid ("src"), tested, its length probe joining 1 and 2 pairs,
    with the decoding study at the smoke size."""
    run_dir = tmp_path_factory.mktemp("src") / "runs" / "0"
    record = run(run_dir, cache_dir, "experiment_name=src", "variant=theirs", "length_probe=[1,2]",
                 "decoding_study=e8")  # fmt: skip
    assert record["status"] == "completed"
    return run_dir


def test_an_identical_job_adopts_the_run_relabelled_and_equal_to_training_it(
    tmp_path, cache_dir, source
):
    adopted = job(tmp_path / "dst" / "0", cache_dir, source.parent)
    trained = run(tmp_path / "alone" / "0", cache_dir, "experiment_name=dst", "variant=mine")
    written = json.loads((tmp_path / "dst" / "0" / "results.json").read_text())
    origin = written["reused_from"]
    assert (origin["experiment"], origin["variant"]) == ("src", "theirs")
    assert (written["experiment"], written["variant"], written["config"]["experiment_name"]) == (
        "dst",
        "mine",
        "dst",
    )
    # what training it again gives: the same updates, validations and test translations
    assert adopted["training"]["validations"] == trained["training"]["validations"]
    assert adopted["test"]["bleu"] == trained["test"]["bleu"]
    dst = tmp_path / "dst" / "0"
    assert (dst / "hypotheses.test.txt").read_text() == (
        tmp_path / "alone" / "0" / "hypotheses.test.txt"
    ).read_text()
    assert (dst / "csv" / "metrics.csv").read_bytes() == (
        source / "csv" / "metrics.csv"
    ).read_bytes()
    assert not (dst / "checkpoints").exists()  # they stay in the source run
    # the source's length probe is not this job's: left out, as training it would
    assert "length_probe" in json.loads((source / "results.json").read_text())
    assert "length_probe" not in written and not (dst / "length_probe").exists()
    assert "decoding_study" not in written and not (dst / "decoding_study").exists()
    # the next pass of the queue keeps it as it is; the report says it was reused
    again = job(dst, cache_dir, source.parent)
    assert again["reused_from"]["experiment"] == "src"
    runs, _ = find_runs(tmp_path / "dst")
    assert reused_runs(runs).startswith("1 of 1 runs are identical runs of another grid")


def test_a_job_asking_for_part_of_the_sources_length_probe_adopts_it(tmp_path, cache_dir, source):
    record = job(tmp_path / "dst" / "0", cache_dir, source.parent, "length_probe=[2]")
    assert record["reused_from"]["experiment"] == "src"
    assert (
        record["length_probe"] == json.loads((source / "results.json").read_text())["length_probe"]
    )
    assert (tmp_path / "dst" / "0" / "length_probe" / "join-2.txt").is_file()


def test_a_job_asking_for_the_sources_decoding_study_adopts_it(tmp_path, cache_dir, source):
    record = job(tmp_path / "dst" / "0", cache_dir, source.parent, "decoding_study=e8")
    assert record["reused_from"]["experiment"] == "src"
    assert record["decoding_study"]["settings"]
    assert (tmp_path / "dst" / "0" / "decoding_study" / "outputs.json.gz").is_file()


@pytest.mark.parametrize(
    "differs",
    [
        ["optim.lr=0.002"],  # a training setting
        ["seed=2"],
        ["length_probe=[1,3]"],  # a join the source never measured
        ["decoding_study=e8", "decoding_study.exact_nodes=60"],  # a study it did not make
    ],
    ids=["lr", "seed", "probe", "study"],
)
def test_a_job_that_differs_or_asks_for_more_trains_itself(tmp_path, cache_dir, source, differs):
    record = job(tmp_path / "dst" / "0", cache_dir, source.parent, *differs)
    assert record["status"] == "completed" and "reused_from" not in record
    assert (tmp_path / "dst" / "0" / "checkpoints" / "last.ckpt").is_file()  # trained here


def test_an_unfinished_run_is_not_reused(tmp_path, cache_dir, source):
    pool = tmp_path / "pool"
    (pool / "0").mkdir(parents=True)
    record = json.loads((source / "results.json").read_text())
    (pool / "0" / "results.json").write_text(json.dumps({**record, "status": "interrupted"}))
    result = job(tmp_path / "dst" / "0", cache_dir, pool)
    assert "reused_from" not in result


def test_the_report_names_no_reuse_when_every_run_was_trained_in_its_grid(tmp_path):
    write_run(tmp_path / "runs" / "0", experiment="e7_cells", variant="v", family="plain", bleu=5.0)
    runs, _ = find_runs(tmp_path)
    assert reused_runs(runs) == ""


def _identity(tmp_path: Path, *overrides: str) -> dict:
    cfg = compose_config("train", ["scale=multi30k", *overrides], tmp_path / "job", tmp_path)
    return job_identity(cfg, tmp_path / "job")


@pytest.mark.parametrize(
    "e1, other",
    [
        (
            ["model=plain"],
            ["experiment=e2_reversal", "model=plain", "model.reverse_source=true"],
        ),
        (
            ["model=bahdanau"],
            ["experiment=e2_reversal", "model=bahdanau", "model.reverse_source=false"],
        ),
    ],
    ids=["e2-seq2seq-reversed", "e2-bahdanau-forward"],
)
def test_the_real_data_grids_share_e1s_runs(tmp_path, e1, other):
    """What E2's queue reuses from E1's at multi30k (experiments/run_real.sh), so neither grid's
    budget or sizes may drift apart without the saving going away here first."""
    ours = _identity(tmp_path, "experiment=e1_attention", *e1, "seed=2")
    assert _identity(tmp_path, *other, "seed=2") == ours
    assert _identity(tmp_path, *other, "seed=3") != ours


@pytest.mark.parametrize(
    "experiment, job_dir",
    [
        ("e1_attention", "0"),
        ("e1_attention", "1"),
        ("e1_attention", "6"),  # Luong, unscaled before E1's families/luong_multi30k.yaml
        ("e4_norm_warmup", "0"),
        ("e7_cells", "0"),
    ],
)
def test_a_committed_run_is_still_the_job_its_overrides_compose_today(
    tmp_path, experiment, job_dir
):
    """A grid's committed runs (at multi30k, recorded as model=seq2seq scale=real_cpu, with the
    heatmap settings and the keys of their day) stay reusable: the job their overrides compose
    today, names translated (seq2seq_lab/renames.py) and options whose default changed set as
    they were (seq2seq_lab/added_settings.py), has their training identity; the default job
    (model.init=paper) does not."""
    run_dir = REPOSITORY / "experiments" / experiment / "results" / "multi30k" / "runs" / job_dir
    record = json.loads((run_dir / "results.json").read_text())
    overrides = [
        current_override(o)
        for o in record["overrides"]
        if not o.startswith(("reuse_from=", "resume="))
    ]
    # options whose default changed since, at the values the run was made with
    overrides = with_added_settings(overrides, record["config"], current("scale", record["scale"]))
    cfg = compose_config("train", overrides, tmp_path / "job", tmp_path)
    assert job_identity(cfg, tmp_path / "job") == training_identity(record["config"])
    if "model.init=xavier" in overrides:
        today = [o for o in overrides if o != "model.init=xavier"]
        cfg = compose_config("train", today, tmp_path / "today", tmp_path)
        assert job_identity(cfg, tmp_path / "today") != training_identity(record["config"])
