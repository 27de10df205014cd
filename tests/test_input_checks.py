"""Every bad input is refused before work starts, in one line naming the key or the file
(issue 20, item 6): train's ckpt_path, decoding settings, translate's output and
batch_size; and a checkpoint's data.root found from any working directory (item 9)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import torch
from conftest import compose_config, run_cli, tiny_overrides

from seq2seq_lab.checkpoint import load_checkpoint
from seq2seq_lab.errors import CheckpointError, ConfigError
from seq2seq_lab.pipeline.evaluation import evaluate
from seq2seq_lab.pipeline.training import train
from seq2seq_lab.pipeline.translation import translate

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A bahdanau smoke run's directory (2 updates, no test)."""
    run_dir = tmp_path_factory.mktemp("trained")
    cfg = compose_config(
        "train",
        tiny_overrides("bahdanau", "trainer.max_steps=2", "test=false"),
        run_dir,
        tmp_path_factory.mktemp("cache"),
    )
    assert train(cfg)["status"] == "completed"
    return run_dir


def bad_checkpoints(trained: Path, where: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, what the one-line message must say)."""
    last = trained / "checkpoints" / "last.ckpt"
    truncated = where / "truncated.ckpt"
    truncated.write_bytes(last.read_bytes()[:3000])
    text = where / "notes.ckpt"
    text.write_text("hello\n")
    pickled = where / "pickled.ckpt"
    torch.save({"args": argparse.Namespace(lr=1.0)}, pickled)  # a weights-only load refuses
    foreign = where / "foreign.ckpt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    raw = torch.load(last, weights_only=True)
    del raw["optimizer_states"]
    weights_only = where / "averaged.ckpt"
    torch.save(raw, weights_only)
    return {
        "missing": (where / "nope.ckpt", "no such checkpoint file"),
        "directory": (where, "a directory"),
        "truncated": (truncated, "not a readable checkpoint (truncated"),
        "not-torch": (
            text,
            "not a readable checkpoint (a text file, not one torch.save wrote: it begins 'hello')",
        ),
        "python-objects": (pickled, "holds Python objects other than tensors"),
        "foreign": (foreign, "not a seq2seq-lab training checkpoint"),
        "weights-only": (weights_only, "holds weights only, no training state"),
    }


BAD = ["missing", "directory", "truncated", "not-torch", "python-objects", "foreign"]


@pytest.mark.parametrize("name", [*BAD, "weights-only"])
def test_a_bad_ckpt_path_stops_train_before_any_work(name, trained, tmp_path, cache_dir):
    files = tmp_path / "files"
    files.mkdir()
    path, expected = bad_checkpoints(trained, files)[name]
    run_dir = tmp_path / "run"
    cfg = compose_config(
        "train", tiny_overrides("bahdanau", f"ckpt_path={path}"), run_dir, cache_dir
    )
    with pytest.raises(CheckpointError) as error:
        train(cfg)
    message = str(error.value)
    assert message.startswith(f"ckpt_path={path}") and expected in message
    assert "\n" not in message and "weights_only" not in message
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "failed"
    assert "data" not in results  # refused before the data was read


@pytest.mark.parametrize("name", BAD)
def test_eval_gives_the_same_one_line_checkpoint_errors(name, trained, tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    path, expected = bad_checkpoints(trained, files)[name]
    with pytest.raises(CheckpointError) as error:
        load_checkpoint(path)
    assert expected in str(error.value) and "\n" not in str(error.value)
    assert "weights_only" not in str(error.value)


def test_a_checkpoint_of_another_family_stops_train_before_any_work(trained, tmp_path, cache_dir):
    last = trained / "checkpoints" / "last.ckpt"
    cfg = compose_config(
        "train", tiny_overrides("transformer", f"ckpt_path={last}"), tmp_path, cache_dir
    )
    with pytest.raises(CheckpointError, match=r"holds a 'bahdanau' model, but model=transformer"):
        train(cfg)
    assert "data" not in json.loads((tmp_path / "results.json").read_text())


def test_a_checkpoint_of_other_sizes_stops_train_before_training(trained, tmp_path, cache_dir):
    last = trained / "checkpoints" / "last.ckpt"
    cfg = compose_config(
        "train",
        tiny_overrides("bahdanau", f"ckpt_path={last}", "model.hidden_size=24"),
        tmp_path,
        cache_dir,
    )
    with pytest.raises(CheckpointError) as error:
        train(cfg)
    assert "does not fit this run's model" in str(error.value)
    assert "model.hidden_size=32 in it, 24 here" in str(error.value)
    assert "training" not in json.loads((tmp_path / "results.json").read_text())


def test_train_cli_prints_one_line_and_exits_2_for_a_bad_checkpoint(trained, tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    path, expected = bad_checkpoints(trained, files)["python-objects"]
    proc = run_cli("train", *tiny_overrides("bahdanau"), f"ckpt_path={path}",
                   f"hydra.run.dir={tmp_path / 'run'}")  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "weights_only" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: ckpt_path={path}") and expected in last


# ------------------------------------------------------------------------ decoding settings
@pytest.mark.parametrize(
    "override,key",
    [
        ("module.test_decoding.beam_size=0", "module.test_decoding.beam_size"),
        ("module.val_decoding.max_len_a=-1", "module.val_decoding.max_len_a"),
        ("module.divergence.patience=0", "module.divergence.patience"),
        ("+decoding.beam_size=3", "decoding.*: train has no decoding section"),
        ("length_probe=[1,0]", r"length_probe=\[1, 0\]: expected a list of pairs to join"),
        ("length_probe=2", "length_probe=2: expected a list"),
        ("trainer.max_steps=-5", r"trainer\.max_steps=-5: expected an integer >= 0, or -1"),
    ],
)
def test_train_settings_are_checked_before_the_data_is_read(override, key, tmp_path, cache_dir):
    cfg = compose_config("train", tiny_overrides("bahdanau", override), tmp_path, cache_dir)
    with pytest.raises(ConfigError, match=rf"^{key}"):
        train(cfg)
    assert "data" not in json.loads((tmp_path / "results.json").read_text())


@pytest.mark.parametrize("entry", [evaluate, translate])
@pytest.mark.parametrize(
    "override,message",
    [
        ("decoding.beam_size=0", r"^decoding\.beam_size must be an integer >= 1, got 0$"),
        ("decoding.min_len=-1", r"^decoding\.min_len must be an integer >= 0, got -1$"),
        ("+decoding.beams=2", r"^decoding\.beams: unknown decoding setting"),
    ],
)
def test_eval_and_translate_decoding_overrides_are_checked_first(
    entry, override, message, tmp_path
):
    # the checkpoint does not exist: the settings are refused before it is looked at
    name = "eval" if entry is evaluate else "translate"
    cfg = compose_config(name, [f"ckpt_path={tmp_path / 'nope.ckpt'}", override], tmp_path)
    with pytest.raises(ConfigError, match=message):
        entry(cfg)


def test_eval_refuses_bad_length_probe_joins_before_the_checkpoint(tmp_path):
    cfg = compose_config(
        "eval", [f"ckpt_path={tmp_path / 'nope.ckpt'}", "length_probe=[2,-1]"], tmp_path
    )
    with pytest.raises(ConfigError, match=r"^length_probe=\[2, -1\]: expected a list of pairs"):
        evaluate(cfg)


@pytest.mark.parametrize(
    "override,message",
    [
        ("batch_size=0", r"^batch_size=0: expected a positive integer$"),
        ("batch_size=many", r"^batch_size=many: expected a positive integer$"),
        ("output={tmp}/no/such/dir/out.txt", r"^output=.*/out\.txt: directory .*/dir does not"),
        ("output={tmp}", r"^output=.*: a directory; expected a file path$"),
    ],
)
def test_translate_settings_are_checked_before_anything_is_read(override, message, tmp_path):
    cfg = compose_config(
        "translate",
        [f"ckpt_path={tmp_path / 'nope.ckpt'}", override.format(tmp=tmp_path)],
        tmp_path,
    )
    with pytest.raises(ConfigError, match=message):
        translate(cfg)


def test_translate_cli_refuses_a_missing_output_directory_before_decoding(trained, tmp_path):
    src = tmp_path / "src.txt"
    src.write_text("ka lo mi\n", encoding="utf-8")
    out = tmp_path / "no" / "out.txt"
    proc = run_cli("translate", f"ckpt_path={trained / 'checkpoints' / 'last.ckpt'}",
                   f"input={src}", f"output={out}")  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        f"error: output={out}: directory {out.parent} does not exist; create it first"
    )


# ------------------------------------------------------------------------------ data.root
def test_eval_finds_a_relative_data_root_from_another_directory(tmp_path, cache_dir, monkeypatch):
    from test_data_datamodule import write_tiny_corpus

    from seq2seq_lab.data.test_set import read_test_lines
    from seq2seq_lab.record import portable_paths

    # a checkout at tmp/repo: the corpus lies beside it, so the runs name their test set by
    # path and checksum (test_set.json, seq2seq_lab/data/test_set.py) instead of copying it
    monkeypatch.setattr(portable_paths, "REPOSITORY", tmp_path / "repo")
    launch = tmp_path / "launch"
    launch.mkdir()
    write_tiny_corpus(launch / "corpus")
    monkeypatch.chdir(launch)
    run_dir = tmp_path / "run"
    cfg = compose_config(
        "train",
        [
            "model=plain",
            "model_size=plain_smoke",
            "data=parallel_text",
            "data.root=corpus",  # relative to the launch directory
            "data.tokenizer.vocab_size=120",
            "data.max_tokens=400",
            "trainer.max_steps=2",
            "trainer.max_time=null",
        ],
        run_dir,
        cache_dir,
    )
    assert train(cfg)["status"] == "completed"
    # results.json keeps the config as given (no machine path); the checkpoint resolves it
    results = json.loads((run_dir / "results.json").read_text())
    assert results["config"]["data"]["root"] == "corpus"
    last = run_dir / "checkpoints" / "last.ckpt"
    assert load_checkpoint(last).run_config["data"]["root"] == str(launch / "corpus")
    monkeypatch.chdir(tmp_path)  # elsewhere: eval reads the run's data by its absolute path
    out = tmp_path / "eval"
    scored = evaluate(compose_config("eval", [f"ckpt_path={last}", "data.split=val"], out))
    assert scored["status"] == "completed" and scored["test"]["sentences"] == 8
    for directory, split in ((run_dir, "test"), (out, "val")):
        record = json.loads((directory / "test_set.json").read_text())
        assert record["sources"]["path"] == f"../launch/corpus/{split}.de"
        assert not list(directory.glob("sources.*")) + list(directory.glob("references.*"))
        lines = (launch / "corpus" / f"{split}.en").read_text(encoding="utf-8").splitlines()
        assert read_test_lines(directory, "references", split) == lines


# ------------------------------------------------- refused before Hydra makes a run directory
@pytest.mark.parametrize(
    "args,message",
    [
        (["optim.lr=-0.001"],
         "optim.lr=-0.001: torch.optim.Adam refuses it (Invalid learning rate: -0.001)"),
        (["data=multi30k"],
         "data.root is not set: data=multi30k reads {{root}}/{{split}}.{{lang}} files; pass "
         "data.root=DIR (e.g. data.root=../shared/data/multi30k) or data.download=true"),
        (["data=multi30k", "data.root={tmp}/nowhere"],
         "missing file {tmp}/nowhere/train.de and 5 more: data=multi30k expects "
         "{tmp}/nowhere/{{train,val,test2016}}.{{de,en}} (or pass data.download=true)"),
        pytest.param(
            ["trainer=ddp"],
            "trainer=ddp: trainer.accelerator=gpu needs a GPU and torch finds none here; on a "
            "CPU write trainer=cpu (or leave trainer=default: accelerator auto)",
            marks=pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here"),
        ),
    ],
)  # fmt: skip
def test_train_inputs_are_refused_before_the_run_directory(args, message, tmp_path):
    run_dir = tmp_path / "run"
    proc = run_cli("train", "scale=smoke", *(a.format(tmp=tmp_path) for a in args),
                   f"hydra.run.dir={run_dir}")  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.splitlines() == [f"error: {message.format(tmp=tmp_path)}"]
    assert proc.stdout == ""  # no "report:" line for a run that never was
    assert not run_dir.exists()


@pytest.mark.parametrize("entry", ["eval", "translate"])
@pytest.mark.parametrize(
    "ckpt,message",
    [("nope.ckpt", "no such checkpoint file"), ("notes.txt", "not a readable checkpoint")],
)
def test_eval_and_translate_refuse_a_checkpoint_before_any_output(entry, ckpt, message, tmp_path):
    (tmp_path / "notes.txt").write_text("hello\n")
    proc = run_cli(entry, f"ckpt_path={tmp_path / ckpt}", cwd=tmp_path)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: ckpt_path={tmp_path / ckpt}: {message}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # no outputs/eval/...
