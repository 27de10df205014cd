"""Renamed options (seq2seq_lab/renames.py): an old name on the command line is one line naming
the new one; a recorded old name reads as the new one; no old name is still an option."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from seq2seq_lab.checkout import CONF_DIR
from seq2seq_lab.errors import UserError
from seq2seq_lab.renames import RENAMED, check_argv, current, current_override
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
    assert current_override("trainer=cpu") == "trainer=cpu"
    assert current_override("hydra.sweep.dir=multirun/x/cpu") == "hydra.sweep.dir=multirun/x/cpu"


def test_a_run_recorded_at_an_old_scale_reports_the_new_name(tmp_path):
    path = write_run(
        tmp_path / "0",
        experiment="e1_attention",
        variant="luong",
        family="luong",
        scale="real_cpu",
        overrides=["scale=real_cpu", "seed=1"],
    )
    (run,), _ = find_runs(path.parent)
    assert run.scale == "multi30k" and run.overrides == ["scale=multi30k", "seed=1"]


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
