"""Data parallel training (trainer=ddp) on two CPU processes (gloo): the run's outputs are
written once, by global rank zero, and its test score counts every test sentence once."""

from __future__ import annotations

import json

import pytest
import torch.distributed
from conftest import compose_config, run_cli, tiny_overrides
from lightning.pytorch.utilities.rank_zero import rank_zero_only

from seq2seq_lab.data.test_set import read_test_lines
from seq2seq_lab.pipeline.building import build_datamodule
from seq2seq_lab.pipeline.training import train

pytestmark = pytest.mark.slow

GLOO = torch.distributed.is_available() and torch.distributed.is_gloo_available()


@pytest.mark.parametrize("trainer", ["default", "cpu", "gpu", "ddp"])
def test_every_trainer_config_leaves_ddp_sharding_to_the_batch_sampler(trainer, tmp_path):
    # Lightning would otherwise try to inject a DistributedSampler and stop with a TypeError
    cfg = compose_config("train", [f"trainer={trainer}"], tmp_path)
    assert cfg.trainer.use_distributed_sampler is False


def test_a_rank_other_than_zero_writes_no_run_files(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setattr(rank_zero_only, "rank", 1)  # as in a DDP child process
    results = train(
        compose_config(
            "train", tiny_overrides("bahdanau", "trainer.max_steps=2"), tmp_path, cache_dir
        )
    )
    assert results["status"] == "completed" and results["test"]["sentences"] == 12
    written = {p.name for p in tmp_path.iterdir()}
    assert not written & {"results.json", "hypotheses.test.txt", "test_set.json"}


@pytest.mark.skipif(not GLOO, reason="torch.distributed with the gloo backend is unavailable")
def test_ddp_on_two_cpu_processes_writes_one_record_of_the_whole_test_set(tmp_path, cache_dir):
    # Hydra's default run directory: the rank 1 process Lightning starts is handed rank
    # zero's, whose name (${run_stamp:}) it must not resolve again
    proc = run_cli(
        "train",
        *tiny_overrides(
            "bahdanau",
            "trainer=ddp",
            "trainer.accelerator=cpu",
            "trainer.devices=2",
            "trainer.precision=32-true",
            "trainer.max_steps=2",
            "threads=1",
        ),
        f"paths.cache_dir={cache_dir}",
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (record,) = tmp_path.rglob("results.json")
    run_dir = record.parent
    assert (run_dir / "train_ddp_process_1.log").is_file()  # rank 1 ran in the same directory
    assert not [p.name for p in tmp_path.rglob("*.tmp")]
    results = json.loads(record.read_text())
    assert results["status"] == "completed"
    assert results["training"]["world_size"] == 2
    split_size = results["data"]["splits"]["test"]["pairs"]
    assert split_size == 12
    assert results["test"]["sentences"] == split_size
    hypotheses = (run_dir / "hypotheses.test.txt").read_text(encoding="utf-8").splitlines()
    assert len(hypotheses) == split_size
    # each sentence of the split once, in corpus order (none twice from the other rank)
    cfg = compose_config("train", tiny_overrides("bahdanau"), tmp_path / "dm", cache_dir)
    datamodule = build_datamodule(cfg.data)
    datamodule.prepare_data()
    datamodule.setup("test")
    # the generated test set is named by its data config (test_set.json), not copied
    assert not (run_dir / "sources.test.txt").exists()
    assert read_test_lines(run_dir, "sources", "test") == datamodule.raw_pairs("test")[0]
