"""Renamed options (seq2seq_lab/renames.py): an old name on the command line is one line naming
the new one; a recorded old name reads as the new one; no old name is still an option."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from seq2seq_lab.checkout import CONF_DIR
from seq2seq_lab.errors import ConfigError, UserError
from seq2seq_lab.record.run_dir import continuation
from seq2seq_lab.renames import RENAMED, check_argv, current, current_override, current_variant
from seq2seq_lab.report.runs import find_runs
from tests.report_support import write_run


@pytest.mark.parametrize(
    ("group", "old", "new"), [(g, o, n) for g, t in RENAMED.items() for o, n in t.items()]
)
def test_every_new_name_is_an_option_and_no_old_one_is(group, old, new):
    assert (Path(CONF_DIR) / group / f"{new}.yaml").is_file()
    assert not (Path(CONF_DIR) / group / f"{old}.yaml").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["model=luong", "scale=cpu"], "scale=cpu was renamed: use scale=synthetic"),
        (["-m", "scale=smoke,real_cpu"], "scale=real_cpu was renamed: use scale=multi30k"),
        (["+scale=cpu"], "scale=cpu was renamed: use scale=synthetic"),
        (["-m", "model=bahdanau,seq2seq"], "model=seq2seq was renamed: use model=plain"),
    ],
)
def test_an_old_name_on_the_command_line_names_the_new_one(argv, message):
    with pytest.raises(UserError, match=message):
        check_argv(argv)


def test_current_names_and_other_keys_pass():
    check_argv(["scale=synthetic", "trainer=cpu", "model.cell=gru", "data.root=cpu", "-m"])


def test_recorded_names_read_as_today():
    assert current("scale", "real_cpu") == "multi30k" and current("scale", "smoke") == "smoke"
    assert current("scale", None) is None and current("trainer", "cpu") == "cpu"
    assert current_override("scale=cpu") == "scale=synthetic"
    assert current_override("model=seq2seq,bahdanau") == "model=plain,bahdanau"
    assert current("model", "seq2seq") == "plain" and current("model", "luong") == "luong"
    assert [current_variant(v) for v in ("seq2seq", "seq2seq_lstm", "seq2seq_reverse-true")] == [
        "plain",
        "plain_lstm",
        "plain_reverse-true",
    ]
    assert current_variant("seq2seqx") == "seq2seqx" and current_variant("bahdanau_gru") == (
        "bahdanau_gru"
    )
    assert current_override("trainer=cpu") == "trainer=cpu"
    assert current_override("hydra.sweep.dir=multirun/x/cpu") == "hydra.sweep.dir=multirun/x/cpu"


def test_a_run_recorded_under_old_names_reports_the_new_ones(tmp_path):
    path = write_run(
        tmp_path / "0",
        experiment="e7_cells",
        variant="seq2seq_lstm",
        family="plain",
        scale="real_cpu",
        overrides=["model=seq2seq", "scale=real_cpu", "seed=1"],
    )
    results = json.loads((path / "results.json").read_text())
    results["family"] = "seq2seq"  # as recorded before the rename
    (path / "results.json").write_text(json.dumps(results))
    (run,), _ = find_runs(path.parent)
    assert run.scale == "multi30k" and run.family == "plain" and run.variant == "plain_lstm"
    assert run.overrides == ["model=plain", "scale=multi30k", "seed=1"]


def test_a_queue_goes_on_with_a_run_recorded_under_the_old_model_name(tmp_path):
    path = write_run(
        tmp_path / "0", experiment="e1_attention", variant="seq2seq", family="plain", seed=2
    )
    results = json.loads((path / "results.json").read_text())
    results["config"].update(experiment_name="e1_attention", variant="seq2seq", seed=2)
    (path / "results.json").write_text(json.dumps(results))
    job = {"experiment_name": "e1_attention", "variant": "plain", "seed": 2}
    assert continuation(path, job).finished is not None
    with pytest.raises(ConfigError, match="holds the run"):
        continuation(path, job | {"variant": "bahdanau"})


@pytest.mark.parametrize("entry", ["train", "eval", "translate"])
def test_each_entry_point_stops_on_an_old_name_with_one_line(entry):
    done = subprocess.run(
        [sys.executable, "-m", f"seq2seq_lab.{entry}", "scale=cpu"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == "error: scale=cpu was renamed: use scale=synthetic\n"
