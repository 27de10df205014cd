"""Adding a comparison is copying a folder: an experiment folder outside the checkout, named in
$SEQ2SEQ_LAB_EXPERIMENTS, is found by training (Hydra's search path), by the sweep and by the
report, which judges its runs by the folder's own spec. Nothing in the library names it."""

from __future__ import annotations

import json
import textwrap

import pytest
from conftest import run_cli

from seq2seq_lab import experiment_folders

pytestmark = pytest.mark.slow

CONFIG = """\
# @package _global_
# Source reversal in the plain LSTM seq2seq: one flag, swept.
experiment_name: my_reversal
variant: reverse-${model.reverse_source}
defaults:
  - override /model: plain
hydra:
  sweep:
    dir: multirun/my_reversal/${hydra:runtime.choices.scale}/${run_stamp:}
  sweeper:
    params:
      model.reverse_source: false,true
      seed: ${seeds}
"""

SPEC = '''\
"""My reversal: the reversed source against the forward one, paired by seed."""

from seq2seq_lab.report.checks import config_flag, judged
from seq2seq_lab.report.plots import LossCurves
from seq2seq_lab.report.rules import BETTER
from seq2seq_lab.report.spec import Check, ExperimentSpec, QualityFloor


def _reversal_helps(c):
    forward, reversed_ = c.find(reverse=False), c.find(reverse=True)
    return judged(c, "reversed - forward", forward, reversed_, BETTER)


SPEC = ExperimentSpec(
    name="my_reversal",
    title="My reversal: does reversing the source help a plain LSTM?",
    published="Reversing the source helps (Sutskever et al. 2014).",
    expected="Reversed above forward.",
    role=lambda run: {"reverse": config_flag(run, "model.reverse_source")},
    floor=QualityFloor(reference={"reverse": True}, bleu={"synthetic": 10.0}, text="reversed"),
    checks=(Check("the reversed source scores higher", _reversal_helps, main=True),),
    plots=(LossCurves(),),
)
'''


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A root of experiment folders holding one new comparison."""
    folder = tmp_path / "lab" / "my_reversal"
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(CONFIG)
    (folder / "spec.py").write_text(textwrap.dedent(SPEC))
    monkeypatch.setenv(experiment_folders.ENV, str(tmp_path / "lab"))
    return folder


def test_a_new_folder_is_a_comparison_that_trains_sweeps_and_reports(lab, tmp_path, cache_dir):
    assert experiment_folders.folder("my_reversal") == lab
    sweep = tmp_path / "sweep"
    proc = run_cli(
        "train",
        "-m",
        "experiment=my_reversal",
        "scale=smoke",
        f"paths.cache_dir={cache_dir}",
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(p.read_text()) for p in sorted(sweep.glob("*/results.json"))]
    assert [r["status"] for r in records] == ["completed", "completed"]
    assert {r["experiment"] for r in records} == {"my_reversal"}
    assert sorted(r["variant"] for r in records) == ["reverse-False", "reverse-True"]

    out = tmp_path / "report"
    proc = run_cli("report", str(sweep), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = (out / "my_reversal" / "report.md").read_text()
    # judged by the folder's spec: its title, its check, its rule
    assert "My reversal: does reversing the source help a plain LSTM?" in report
    assert "the reversed source scores higher (main check)" in report
    verdict = json.loads((out / "my_reversal" / "verdict.json").read_text())
    assert verdict["verdict"].startswith("inconclusive")  # one seed at smoke: too few


def test_a_typo_in_the_folder_name_lists_the_comparisons(lab):
    proc = run_cli("train", "experiment=my_reversl", "scale=smoke")
    assert proc.returncode != 0
    assert "my_reversal" in proc.stderr  # Hydra lists the options it found
