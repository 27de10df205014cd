"""results.json and the test outputs: written atomically through a temporary file of their own,
once, by global rank zero (seq2seq_lab/record/results.py, pipeline.building.write_test_outputs)."""

from __future__ import annotations

import os

import pytest
from lightning.pytorch.utilities.rank_zero import rank_zero_only

import seq2seq_lab.record.atomic as atomic_module
from seq2seq_lab.pipeline.building import write_test_outputs
from seq2seq_lab.record.results import read_results, write_results

RECORD = {"status": "completed", "seed": 1}


def test_two_writers_at_once_each_use_their_own_temporary_file(tmp_path, monkeypatch):
    # Interleave two writers of one results.json deterministically: the second writes and
    # replaces while the first holds its written temporary file (two DDP ranks, or two jobs).
    real_replace = os.replace
    sources = []

    def replace_after_another_writer(src, dst):
        sources.append(os.path.basename(src))
        if len(sources) == 1:
            write_results(tmp_path / "results.json", {**RECORD, "seed": 2})
        real_replace(src, dst)

    monkeypatch.setattr(atomic_module.os, "replace", replace_after_another_writer)
    write_results(tmp_path / "results.json", RECORD)
    assert read_results(tmp_path / "results.json") == RECORD  # the last replace wins, whole
    assert sources[0] != sources[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # nothing left over


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path):
    write_results(tmp_path / "results.json", RECORD)
    with pytest.raises(TypeError):
        write_results(tmp_path / "results.json", {**RECORD, "bad": object()})
    assert read_results(tmp_path / "results.json") == RECORD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_written_files_get_the_usual_permissions(tmp_path):
    write_results(tmp_path / "results.json", RECORD)
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    assert (tmp_path / "results.json").stat().st_mode == plain.stat().st_mode


def test_only_global_rank_zero_writes_the_test_outputs(tmp_path, monkeypatch):
    test_results = {
        "split": "test",
        "bleu": 1.0,
        "hypotheses": ["a b"],
        "references": ["a c"],
        "sources": ["x y"],
    }
    monkeypatch.setattr(rank_zero_only, "rank", 1)
    scores = write_test_outputs(tmp_path, test_results)
    assert scores == {"split": "test", "bleu": 1.0}  # every rank has the scores...
    assert list(tmp_path.iterdir()) == []  # ...but only rank zero writes
    monkeypatch.setattr(rank_zero_only, "rank", 0)
    write_test_outputs(tmp_path, test_results)
    assert (tmp_path / "hypotheses.test.txt").read_text(encoding="utf-8") == "a b\n"
