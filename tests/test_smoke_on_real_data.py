"""``scale=smoke`` on any data set: a corpus read from files is cut to the first pairs of each
split (data.first_pairs), the generated tasks are drawn at their smoke size instead
(conf/data_size/), and a wrong data.root gets the data's own one-line error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO, compose_config, run_cli, tiny_overrides

pytestmark = pytest.mark.slow

MULTI30K = REPO.parent / "shared" / "data" / "multi30k"  # ../shared/data/multi30k
FIRST_PAIRS = {"train": 160, "val": 12, "test": 12}  # conf/scale/smoke.yaml


def _smoke_on_multi30k(run_dir: Path, cache_dir: Path, checkout: Path = REPO) -> None:
    """Train at the smoke scale on ``../shared/data/multi30k`` beside ``checkout``."""
    proc = run_cli("train", *tiny_overrides("bahdanau", "data=multi30k",
                   "data.root=../shared/data/multi30k", "threads=1"),
                   f"paths.cache_dir={cache_dir}", f"hydra.run.dir={run_dir}",
                   cwd=checkout)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads((run_dir / "results.json").read_text())
    assert record["status"] == "completed"
    assert {split: s["pairs"] for split, s in record["data"]["splits"].items()} == FIRST_PAIRS
    # the test set is the first lines of the real test files (test_set.json: where it came from)
    test_set = json.loads((run_dir / "test_set.json").read_text())
    assert {side: (test_set[side]["path"], test_set[side]["start"], test_set[side]["lines"])
            for side in ("sources", "references")} == {
        "sources": ("../shared/data/multi30k/test2016.de", 0, 12),
        "references": ("../shared/data/multi30k/test2016.en", 0, 12),
    }  # fmt: skip
    assert record["test"]["sentences"] == 12


@pytest.mark.skipif(not MULTI30K.is_dir(), reason="no shared Multi30k copy")
def test_smoke_on_multi30k_trains_on_the_first_pairs_of_each_split(tmp_path, cache_dir):
    _smoke_on_multi30k(tmp_path / "run", cache_dir)


@pytest.mark.skipif(not MULTI30K.is_dir(), reason="no shared Multi30k copy")
def test_a_shared_folder_that_is_a_link_is_named_through_the_link(tmp_path, cache_dir, monkeypatch):
    """A clone whose ``../shared`` is a symbolic link to the data elsewhere records the test
    set as ``../shared/...`` (the path through the link), not a copy of its lines."""
    checkout = tmp_path / "clone"
    for part in ("src", "conf"):
        shutil.copytree(REPO / part, checkout / part)
    (tmp_path / "shared").symlink_to(MULTI30K.parents[1].resolve(), target_is_directory=True)
    monkeypatch.setenv("PYTHONPATH", str(checkout / "src"))  # the clone's code, not REPO's
    _smoke_on_multi30k(tmp_path / "run", cache_dir, checkout=checkout)


def test_smoke_with_a_wrong_data_root_says_which_file_is_missing(tmp_path, cache_dir):
    proc = run_cli("train", *tiny_overrides("bahdanau", "data=multi30k",
                   f"data.root={tmp_path / 'nowhere'}"), f"paths.cache_dir={cache_dir}",
                   f"hydra.run.dir={tmp_path / 'run'}")  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"error: missing file {tmp_path / 'nowhere' / 'train.de'} and 5 more: data=multi30k "
        f"expects {tmp_path / 'nowhere'}/{{train,val,test2016}}.{{de,en}} "
        "(or pass data.download=true)"
    )


@pytest.mark.parametrize("data", ["synthetic", "copy", "reverse"])
def test_smoke_draws_the_generated_tasks_small_instead_of_cutting_them(data, tmp_path):
    cfg = compose_config("train", [f"data={data}", "scale=smoke"], tmp_path)
    source = cfg.data.source
    sizes = (source.train_pairs, source.val_pairs, source.test_pairs)
    assert sizes == tuple(FIRST_PAIRS.values())
    assert (source.train_max_words, source.test_max_words) == (8, 12)
    assert set(cfg.data.first_pairs.values()) == {None}  # nothing cut: data.source sizes it
    larger = compose_config("train", [f"data={data}", "scale=smoke",
                            "data.source.train_pairs=600"], tmp_path)  # fmt: skip
    assert larger.data.source.train_pairs == 600 and larger.data.first_pairs.train is None
