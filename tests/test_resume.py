"""Exact resume (issue 20.1-2): a run stopped, or killed with SIGKILL, and resumed from
``checkpoints/last.ckpt`` computes what the uninterrupted run computes (every logged training
loss, the validation scores, the tested checkpoint, test loss and BLEU), with dropout on, and
its ``csv/metrics.csv`` holds the whole history, every step once.

The pieces first (the batch sampler's place in the epoch, the generators' and the divergence
rule's state, atomic checkpoint writes, the history file), then whole runs.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from config_values import module_settings
from conftest import REPO, accelerator_override, compose_config, tiny_overrides

from seq2seq_lab.config import model_config
from seq2seq_lab.data.batching import ResumableDataLoader, TokenBudgetBatchSampler
from seq2seq_lab.loggers.csv_logger import ResumableCSVLogger
from seq2seq_lab.pipeline.training import train
from seq2seq_lab.record.compressed_outputs import compress_finished_runs
from seq2seq_lab.training.checkpoint_io import AtomicCheckpointIO
from seq2seq_lab.training.divergence import DivergenceRule
from seq2seq_lab.training.module import Seq2SeqModule
from seq2seq_lab.training.rng import rng_state, set_rng_state


# ---------------------------------------------------------------------------- the pieces
def _loader(n: int = 300, seed: int = 4) -> ResumableDataLoader:
    lengths = [2 + (i * 7) % 23 for i in range(n)]
    sampler = TokenBudgetBatchSampler(
        src_lengths=lengths, tgt_lengths=lengths, max_tokens=60, shuffle=True, seed=seed
    )
    return ResumableDataLoader(list(range(n)), batch_sampler=sampler, collate_fn=list)


def test_the_training_loader_resumes_at_the_batch_it_stopped_before():
    first = _loader()
    first.batch_sampler.set_epoch(2)
    epoch2 = list(first)
    assert len(epoch2) > 10
    first.batch_sampler.set_epoch(3)
    epoch3 = list(first)

    interrupted = _loader()
    interrupted.batch_sampler.set_epoch(2)
    served = iter(interrupted)
    seen = [next(served) for _ in range(7)]
    state = interrupted.state_dict()
    assert state == {"epoch": 2, "position": 7}
    assert seen == epoch2[:7]

    resumed = _loader()  # a new process: Lightning loads the state, then sets the epoch
    resumed.load_state_dict(state)
    resumed.batch_sampler.set_epoch(2)
    assert list(resumed) == epoch2[7:]
    assert resumed.state_dict() == {"epoch": 2, "position": len(epoch2)}
    resumed.batch_sampler.set_epoch(3)  # the next epoch is whole again
    assert list(resumed) == epoch3
    resumed.batch_sampler.set_epoch(3)
    assert list(resumed) == epoch3  # a restored position serves one iteration only


def test_a_restored_position_belongs_to_its_epoch():
    reference = _loader()
    reference.batch_sampler.set_epoch(5)
    epoch5 = list(reference)
    resumed = _loader()
    resumed.load_state_dict({"epoch": 4, "position": 3})
    resumed.batch_sampler.set_epoch(5)  # the saved epoch had ended: Lightning moves on
    assert list(resumed) == epoch5


def test_generator_states_survive_a_weights_only_checkpoint(tmp_path):
    torch.manual_seed(3)
    state = rng_state()
    expected = torch.rand(4), torch.nn.functional.dropout(torch.ones(8), 0.5)
    torch.save(state, tmp_path / "rng.pt")
    torch.manual_seed(99)
    set_rng_state(torch.load(tmp_path / "rng.pt", weights_only=True))
    again = torch.rand(4), torch.nn.functional.dropout(torch.ones(8), 0.5)
    assert all(torch.equal(a, b) for a, b in zip(expected, again))


def _module() -> Seq2SeqModule:
    network = {**model_config("bahdanau", hidden_size=8, embedding_dim=4)}
    network.update(src_vocab_size=11, tgt_vocab_size=13)
    return Seq2SeqModule(
        network=network,
        optimizer={"_target_": "torch.optim.Adam", "lr": 1e-3},
        schedule={"_target_": "seq2seq_lab.optim.schedules.Constant"},
        **module_settings(),
    )


def test_the_module_checkpoints_the_divergence_rule_and_the_generators():
    saved = _module()
    for loss in (2.0, 9.0, 9.5):  # first loss 2.0, then two steps above 3 x 2.0
        saved.divergence.check(loss, step=0)
    saved.validations = [[100, 3.5], [200, 7.25]]
    checkpoint: dict = {}
    saved.on_save_checkpoint(checkpoint)
    expected = torch.rand(3)

    resumed = _module()
    assert resumed.divergence.state_dict() != saved.divergence.state_dict()
    resumed.on_load_checkpoint(checkpoint)
    assert resumed.divergence.state_dict() == {"first_loss": 2.0, "steps_above": 2}
    assert resumed.validations == [[100, 3.5], [200, 7.25]]  # the convergence check's record
    torch.manual_seed(12345)  # what the resumed process draws before its first step
    resumed.on_train_batch_start(batch=None, batch_idx=0)
    assert torch.equal(torch.rand(3), expected)


def test_the_divergence_rule_goes_on_counting_after_a_resume():
    rule = DivergenceRule(**module_settings()["divergence"])
    rule.load_state_dict({"first_loss": 1.0, "steps_above": rule.patience - 1})
    assert rule.check(10.0, step=7) is not None  # the patience-th step above the limit


class _Unpicklable:
    def __reduce__(self):
        raise RuntimeError("disk full")


def test_a_failed_checkpoint_write_leaves_the_previous_file_and_no_temporary(tmp_path):
    io = AtomicCheckpointIO()
    path = tmp_path / "checkpoints" / "last.ckpt"
    io.save_checkpoint({"global_step": 1}, path)
    with pytest.raises(RuntimeError, match="disk full"):
        io.save_checkpoint({"global_step": 2, "bad": _Unpicklable()}, path)
    assert torch.load(path, weights_only=True) == {"global_step": 1}
    assert sorted(p.name for p in path.parent.iterdir()) == ["last.ckpt"]


def _write_history(path: Path, steps: range) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["epoch", "step", "train/loss"])
        writer.writeheader()
        writer.writerows({"epoch": 0, "step": s, "train/loss": 10 - s / 10} for s in steps)


def _history(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _resumed_logger(checkpoint: Path, *, step: int, run_dir: Path, save_dir: Path):
    """The CSV logger of a run resumed from ``checkpoint``, a checkpoint of ``run_dir`` at
    ``step`` (only what the logger reads of one), logging into ``save_dir/csv``."""
    torch.save({"global_step": step, "hyper_parameters": {"run_config": {"paths": {
        "output_dir": str(run_dir)}}}}, checkpoint)  # fmt: skip
    return ResumableCSVLogger(
        save_dir=str(save_dir), name="csv", version="", flush_logs_every_n_steps=1,
        resume_from=str(checkpoint),
    )  # fmt: skip


def test_a_resumed_run_keeps_the_rows_before_its_checkpoint_and_drops_the_rest(tmp_path):
    run = tmp_path / "run"
    _write_history(run / "csv" / "metrics.csv", range(0, 9))  # killed after step 8's row
    logger = _resumed_logger(tmp_path / "last.ckpt", step=6, run_dir=run, save_dir=run)
    logger.log_metrics({"train/loss": 0.5}, step=6)  # the resumed run does step 6 again
    logger.log_metrics({"val/bleu": 7.0}, step=6)  # a new column: the file is rewritten
    logger.save()
    rows = _history(run / "csv" / "metrics.csv")
    assert [r["step"] for r in rows] == ["0", "1", "2", "3", "4", "5", "6", "6"]
    assert rows[5]["train/loss"] == str(10 - 5 / 10)  # the history, as it was
    assert rows[6]["train/loss"] == "0.5" and rows[7]["val/bleu"] == "7.0"
    assert sorted(p.name for p in (run / "csv").iterdir()) == ["metrics.csv"]


def test_a_run_resumed_elsewhere_starts_with_the_history_of_the_checkpoints_run(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    _write_history(old / "csv" / "metrics.csv", range(0, 5))
    logger = _resumed_logger(tmp_path / "last.ckpt", step=3, run_dir=old, save_dir=new)
    logger.log_metrics({"train/loss": 1.0}, step=3)
    logger.save()
    assert [r["step"] for r in _history(new / "csv" / "metrics.csv")] == ["0", "1", "2", "3"]
    assert len(_history(old / "csv" / "metrics.csv")) == 5  # the old run's file is untouched


def test_a_finished_runs_compressed_history_is_continued(tmp_path):
    """A committed run keeps csv/metrics.csv bzip2'd (record/compressed_outputs.py); resumed
    with a larger budget, it continues that history, and the stale compressed copy goes."""
    run = tmp_path / "run"
    _write_history(run / "csv" / "metrics.csv", range(0, 5))
    (run / "results.json").write_text(json.dumps({"status": "completed"}), "utf-8")
    assert compress_finished_runs(tmp_path) == [run / "csv" / "metrics.csv.bz2"]
    logger = _resumed_logger(tmp_path / "last.ckpt", step=5, run_dir=run, save_dir=run)
    logger.log_metrics({"train/loss": 0.5}, step=5)
    logger.save()
    rows = _history(run / "csv" / "metrics.csv")
    assert [r["step"] for r in rows] == ["0", "1", "2", "3", "4", "5"]
    assert rows[4]["train/loss"] == str(10 - 4 / 10)
    assert sorted(p.name for p in (run / "csv").iterdir()) == ["metrics.csv"]


# ---------------------------------------------------------------------------- whole runs
# Synthetic task with 600 training pairs: 9 batches an epoch at the smoke scale's budget. The
# best checkpoint is chosen on validation loss, which falls every epoch at this size (the BLEU
# of a model this small is noise, often best in the first epoch): so the checkpoint tested is
# the last validated one, trained after the resume.
BASE = (
    "threads=1",
    "data.source.train_pairs=600",
    "callbacks.model_checkpoint.monitor=val/loss",
    "callbacks.model_checkpoint.mode=min",
)
TIMING = ("train/tokens_per_second",)  # wall-clock, not a result


@pytest.fixture(autouse=True)
def _keep_torch_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def _run(run_dir: Path, cache_dir: Path, *overrides: str) -> dict:
    cfg = compose_config("train", tiny_overrides("bahdanau", *BASE, *overrides), run_dir, cache_dir)
    return train(cfg)


def _rows(run_dir: Path) -> list[dict[str, str]]:
    """metrics.csv without empty cells and timing columns, in file order."""
    return [
        {k: v for k, v in row.items() if v and k not in TIMING}
        for row in _history(run_dir / "csv" / "metrics.csv")
    ]


def _assert_same_run(resumed: Path, uninterrupted: Path, steps: int, resumed_at: int) -> None:
    a, b = (json.loads((d / "results.json").read_text()) for d in (resumed, uninterrupted))
    assert a["status"] == b["status"] == "completed"
    validations = [
        (float(r["val/loss"]), int(r["step"])) for r in _rows(uninterrupted) if "val/loss" in r
    ]
    assert min(validations)[1] >= resumed_at  # the tested checkpoint was trained after the resume
    for key in ("steps", "epochs", "best_val_bleu"):
        assert a["training"][key] == b["training"][key], key
    for key in ("loss", "bleu", "chrf", "ppl"):
        assert a["test"][key] == b["test"][key], key
    assert (resumed / "hypotheses.test.txt").read_text() == (
        uninterrupted / "hypotheses.test.txt"
    ).read_text()
    history = _rows(resumed)
    train_steps = [int(r["step"]) for r in history if "train/loss" in r]
    assert train_steps == list(range(steps))  # every update's row, once, in order
    assert history == _rows(uninterrupted)  # the same losses, scores, lrs at the same steps


@pytest.mark.slow
@pytest.mark.cuda
@pytest.mark.parametrize(
    "seed, limit, stop, total",
    [
        # max_steps runs: stopped at an epoch end (last.ckpt written after its validation),
        # and in the middle of an epoch (last.ckpt of the update that ended training), of
        # the first epoch too (the loader is then not rebuilt after the checkpoint is read)
        (1, "trainer.max_steps", 18, 40),
        (1, "trainer.max_steps", 23, 40),
        (3, "trainer.max_steps", 5, 30),
        # a max_epochs run stopped at an epoch end
        (2, "trainer.max_epochs", 2, 4),
    ],
)
def test_stop_and_continue_from_last_ckpt_equals_the_uninterrupted_run(
    seed, limit, stop, total, tmp_path, cache_dir, device
):
    other = "trainer.max_epochs=1000" if limit == "trainer.max_steps" else "trainer.max_steps=-1"
    args = (f"seed={seed}", other, accelerator_override(device))
    full = _run(tmp_path / "full", cache_dir, *args, f"{limit}={total}")
    stopped = _run(tmp_path / "run", cache_dir, *args, f"{limit}={stop}", "test=false")
    last = tmp_path / "run" / "checkpoints" / "last.ckpt"
    assert torch.load(last, weights_only=True)["global_step"] == stopped["training"]["steps"]
    resumed = _run(tmp_path / "run", cache_dir, *args, f"{limit}={total}", f"ckpt_path={last}")
    assert resumed["training"]["validations"] == full["training"]["validations"]
    # the train time counts the first segment too (Lightning's Timer, restored from last.ckpt)
    earlier = resumed["timing"]["earlier_segments_seconds"]
    assert full["timing"]["earlier_segments_seconds"] == 0
    assert 0 < earlier <= stopped["timing"]["train_seconds"]
    assert resumed["timing"]["train_seconds"] > earlier
    resumed_at = stopped["training"]["steps"]
    _assert_same_run(tmp_path / "run", tmp_path / "full", full["training"]["steps"], resumed_at)


@pytest.mark.slow
def test_a_run_continued_after_its_time_was_spent_keeps_its_train_time(tmp_path, cache_dir):
    # a run cut by the session after its max_time was spent (while testing) is continued:
    # Lightning trains no further, and the time trained before still counts
    stopped = _run(tmp_path / "run", cache_dir, "seed=1", "trainer.max_steps=6", "test=false")
    last = tmp_path / "run" / "checkpoints" / "last.ckpt"
    resumed = _run(
        tmp_path / "run",
        cache_dir,
        "seed=1",
        "trainer.max_steps=40",
        "trainer.max_time=00:00:00:00",
        f"ckpt_path={last}",
    )
    assert resumed["training"]["steps"] == stopped["training"]["steps"]
    earlier = resumed["timing"]["earlier_segments_seconds"]
    assert 0 < earlier <= stopped["timing"]["train_seconds"]
    assert resumed["timing"]["train_seconds"] >= earlier


def _diagnostics(run_dir: Path) -> list[dict]:
    path = run_dir / "diagnostics" / "validation.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_a_resumed_transformers_diagnostics_are_the_uninterrupted_runs(tmp_path, cache_dir):
    # validation.jsonl (E4, E5's similarity and entropy): one record per validation, as the
    # uninterrupted run writes it, although the stopped run wrote past its checkpoint and the
    # new run's directory held a stale file
    def run(run_dir: Path, *overrides: str) -> dict:
        args = ("seed=2", "trainer.max_epochs=1000", *overrides)
        cfg = compose_config(
            "train", tiny_overrides("transformer", *BASE, *args), run_dir, cache_dir
        )
        return train(cfg)

    (tmp_path / "full" / "diagnostics").mkdir(parents=True)  # left by a run killed early
    (tmp_path / "full" / "diagnostics" / "validation.jsonl").write_text(
        '{"step": 0, "when": "init"}\n'
    )
    run(tmp_path / "full", "trainer.max_steps=30", "test=false")
    full = _diagnostics(tmp_path / "full")
    assert [r["when"] for r in full].count("init") == 1 and full[0]["when"] == "init"
    assert len(full) > 3 and [r["step"] for r in full] == sorted({r["step"] for r in full})

    run(tmp_path / "run", "trainer.max_steps=23", "test=false")  # stops inside an epoch
    last = tmp_path / "run" / "checkpoints" / "last.ckpt"
    assert torch.load(last, weights_only=True)["global_step"] == 23
    with open(tmp_path / "run" / "diagnostics" / "validation.jsonl", "a") as f:
        f.write(json.dumps({**full[-1], "step": 27}) + "\n")  # made after the checkpoint
    run(tmp_path / "run", "trainer.max_steps=30", "test=false", f"ckpt_path={last}")
    assert _diagnostics(tmp_path / "run") == full


def _loader_position(checkpoint: Path) -> tuple[int, int]:
    """(global step, batches of the current epoch done) of a checkpoint."""
    raw = torch.load(checkpoint, map_location="cpu", weights_only=True, mmap=True)
    loader = raw["loops"]["fit_loop"]["state_dict"]["combined_loader"][0]
    return raw["global_step"], loader["position"]


@pytest.mark.slow
def test_kill_9_mid_epoch_then_resume_equals_the_uninterrupted_run(tmp_path, cache_dir):
    args = ("seed=3", "trainer.max_steps=40", "trainer.max_epochs=1000",
            "callbacks.last_checkpoint.every_n_train_steps=4")  # fmt: skip
    _run(tmp_path / "full", cache_dir, *args)
    first_validation = next(int(r["step"]) for r in _rows(tmp_path / "full") if "val/bleu" in r)
    per_epoch = first_validation + 1  # validation after update n is logged at step n - 1

    run_dir = tmp_path / "killed"
    last = run_dir / "checkpoints" / "last.ckpt"
    command = [sys.executable, "-m", "seq2seq_lab.train", *tiny_overrides("bahdanau", *BASE),
               *args, f"paths.cache_dir={cache_dir}", f"hydra.run.dir={run_dir}"]  # fmt: skip
    process = subprocess.Popen(
        command,
        cwd=REPO,
        env={**os.environ, "WANDB_MODE": "offline"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # Freeze the run whenever it has a last.ckpt and look at it; SIGKILL it at the first one
    # written by the every-N rule in the middle of an epoch after the first validation.
    killed_at = None
    deadline = time.monotonic() + 300
    try:
        while killed_at is None and process.poll() is None and time.monotonic() < deadline:
            if last.is_file():
                process.send_signal(signal.SIGSTOP)
                step, position = _loader_position(last)
                if step > per_epoch and 0 < position < per_epoch:
                    killed_at = step
                else:
                    process.send_signal(signal.SIGCONT)
            time.sleep(0.02)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert killed_at is not None, "the run ended before a mid-epoch last.ckpt was written"
    assert killed_at % 4 == 0 and killed_at < 40
    assert not (run_dir / "results.json").exists()  # SIGKILL: nothing ran after it
    assert _rows(run_dir)  # the killed run's history reached the disk

    _run(run_dir, cache_dir, *args, f"ckpt_path={last}")
    _assert_same_run(run_dir, tmp_path / "full", 40, killed_at)


class _Trainer:
    """What WallClockCheckpoints uses of a trainer."""

    def __init__(self) -> None:
        self.saved: list[Path] = []
        self.should_stop = False

    def save_checkpoint(self, path: Path) -> None:
        self.saved.append(Path(path))


def test_wall_clock_snapshots_go_on_from_the_checkpointed_clock(tmp_path):
    from seq2seq_lab.callbacks.wall_clock import WallClockCheckpoints

    before = WallClockCheckpoints(minutes=[1, 2], dirpath=tmp_path)
    before.training_seconds = 90.0  # 1.5 minutes trained, minute-001 written
    before.saved = {1.0: tmp_path / "minute-001.ckpt"}
    resumed = WallClockCheckpoints(minutes=[1, 2], dirpath=tmp_path)
    resumed.load_state_dict(before.state_dict())
    assert resumed.state_dict() == before.state_dict()

    trainer = _Trainer()
    resumed.on_train_start(trainer, None)
    resumed.on_train_batch_end(trainer, None)
    assert trainer.saved == []  # minute 1 is not written again with 1.5 minutes of training
    resumed.training_seconds = 120.0
    resumed.on_train_batch_end(trainer, None)
    assert trainer.saved == [tmp_path / "minute-002.ckpt"] and trainer.should_stop


class _SlowDisk:
    def save_checkpoint(self, checkpoint: dict, path: Path) -> None:
        time.sleep(0.3)

    def barrier(self, name: str) -> None:
        pass


def test_writing_last_ckpt_is_left_out_of_the_training_clocks(tmp_path):
    from seq2seq_lab.callbacks.last_checkpoint import LastCheckpoint
    from seq2seq_lab.callbacks.throughput import ThroughputMonitor
    from seq2seq_lab.callbacks.wall_clock import WallClockCheckpoints

    throughput = ThroughputMonitor(log_every_n_steps=1)
    wall = WallClockCheckpoints(minutes=[1], dirpath=tmp_path)
    last = LastCheckpoint(dirpath=tmp_path, filename="last", every_n_train_steps=1, keep_last=0)
    trainer = _Trainer()
    trainer.callbacks, trainer.loggers, trainer.strategy = [throughput, wall, last], [], _SlowDisk()
    trainer.global_step, trainer.log_every_n_steps = 1, 1
    wall.on_train_start(trainer, None)
    throughput.on_train_epoch_start(trainer, None)
    throughput.on_train_batch_start(trainer, None, None, 0)
    last._pending = {"global_step": 1}  # taken at the previous update's end
    last.on_train_batch_start(trainer, None, None, 0)  # written now, 0.3 s
    batch = type("Batch", (), {"num_tgt_tokens": 10})()
    module = type("Module", (), {"log": lambda *args, **kwargs: None})()
    throughput.on_train_batch_end(trainer, module, None, batch, 0)
    wall.on_train_batch_end(trainer, None)
    assert throughput.step_seconds < 0.2 and throughput.loop_seconds < 0.2
    assert wall.training_seconds < 0.2
