"""A new user's config and command-line mistakes, typed as they would be: each is one line on
stderr naming the override as typed, what was expected and the nearest valid key or option,
with exit code 2, before Hydra makes a run directory or any data is prepared
(seq2seq_lab/command_line.py); a sweep grid run without -m is a warning, and the run goes on;
``--help`` lists the experiments and the groups' options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from seq2seq_lab.experiment_folders import experiments

pytestmark = pytest.mark.slow

MODELS = "expected one of bahdanau, luong, plain, transformer"


def run_train(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m seq2seq_lab.train ARGS`` as a user types it."""
    return subprocess.run(
        [sys.executable, "-m", "seq2seq_lab.train", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["model.dropuot=0.1"],
            "model.dropuot=0.1: no such key; did you mean model.dropout?",
        ),
        (
            ["max_steps=100"],
            "max_steps=100: no such key; did you mean trainer.max_steps?",
        ),
        (
            ["model.foo=1"],
            "model.foo=1: no such key under model; to add it, write +model.foo=1",
        ),
        (
            ["~model.nope"],
            "~model.nope: no such key to delete under model",
        ),
        (
            ["model=lstm"],
            f"model=lstm: no such option of model; {MODELS}; did you mean model.cell=lstm?",
        ),
        (
            ["model=luon"],
            f"model=luon: no such option of model; {MODELS}; did you mean model=luong?",
        ),
        (
            ["model=_network"],
            f"model=_network: no such option of model; {MODELS}",
        ),
        (
            ["modle=luong"],
            "modle=luong: no such key or group; did you mean model=luong?",
        ),
        (
            ["checkpoint=x.ckpt"],
            "checkpoint=x.ckpt: no such key; did you mean ckpt_path?",
        ),
        (
            ["updates=500"],
            "updates=500: updates is a section (synthetic, synthetic_v2, multi30k, full), not "
            "one value; trainer.max_steps reads updates.synthetic here: write "
            "updates.synthetic=500 or trainer.max_steps=500",
        ),
        (
            ["trainer.max_steps=-5"],
            "trainer.max_steps=-5: expected an integer >= 0, or -1 for no limit",
        ),
        (
            ["trainer.val_check_interval=1.5"],
            "trainer.val_check_interval=1.5: expected a fraction of an epoch in (0, 1], "
            "a number of batches >= 1, 'DD:HH:MM:SS', or null",
        ),
        (
            ["hydra/launcher=ray"],
            "hydra/launcher=ray: no such option of hydra/launcher; expected one of basic, "
            "joblib, slurm, submitit_local, submitit_slurm",
        ),
        (
            ["-m", "model=[plain,luong]"],
            "model=[plain,luong]: a list merges several model configs into one run; "
            "to run each, write -m model=plain,luong",
        ),
        (
            ["-m", "model=plain,lstm"],
            f"model=lstm: no such option of model; {MODELS}; did you mean model.cell=lstm?",
        ),
        (
            ["model=plain,luong"],
            "model=plain,luong: several values make a sweep, which runs with -m: "
            "python -m seq2seq_lab.train -m model=plain,luong",
        ),
        (
            ["model.dropout=abc"],
            "model.dropout=abc: expected a number (the default is 0.2)",
        ),
        (
            ["seed=x"],
            "seed=x: expected an integer (the default is 1234)",
        ),
        (
            ["-m", "seed=1,x"],
            "seed=1,x: expected an integer (the default is 1234)",
        ),
        (
            ["deterministic=3"],
            "deterministic=3: expected true or false (the default is true)",
        ),
        (
            ["+model.dropout=0.3"],
            "+model.dropout=0.3: model.dropout exists already (0.2); to change it, "
            "write model.dropout=0.3",
        ),
        (
            ["model.dropout=[0.1"],
            "model.dropout=[0.1: not an override (no viable alternative at input '[0.1'); "
            "expected key=value, e.g. model.dropout=0.1, a sweep as key=a,b, a value with "
            "spaces or brackets in quotes",
        ),
        (
            ["model.dropout"],
            "model.dropout: not an override (missing EQUAL at '<EOF>'); expected key=value, "
            "e.g. model.dropout=0.1, a sweep as key=a,b, a value with spaces or brackets in "
            "quotes",
        ),
        (
            ["--cgf", "job"],
            "unrecognized arguments: --cgf; see --help",
        ),
        (
            ["-m", "--cfg", "job", "seed=1,2"],
            "-m and --cfg: expected one of --run, -m, --cfg, --info, --shell-completion at a time",
        ),
        (
            ["trainer=gpux"],
            "trainer=gpux: no such option of trainer; expected one of cpu, ddp, default, gpu; "
            "did you mean trainer=gpu?",
        ),
        (
            ["decoding@module.test_decoding=beamm"],
            "decoding@module.test_decoding=beamm: no such option of decoding; expected one of "
            "beam, greedy; did you mean decoding@module.test_decoding=beam?",
        ),
        (
            ["module.test_decoding.beam_size=2.5"],
            "module.test_decoding.beam_size=2.5: expected an integer (the default is 5)",
        ),
        (
            ["~model"],
            "~model: this config cannot do without model; expected another option of it instead",
        ),
        (
            ["experiment=e1_attention", "decoding_study=null"],
            "decoding_study=null: a group takes one of its options, not null; did you mean "
            "decoding_study=none?",
        ),
        (
            ["model=null"],
            f"model=null: a group takes one of its options, not null; {MODELS}",
        ),
        (
            ["--cfg", "job", "model=lstm"],
            f"model=lstm: no such option of model; {MODELS}; did you mean model.cell=lstm?",
        ),
    ],
)
def test_a_mistake_is_one_line_before_any_work(args, message, tmp_path):
    run_dir = tmp_path / "run"
    done = run_train(*args, f"hydra.run.dir={run_dir}")
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.splitlines() == [f"error: {message}"]
    assert done.stdout == ""
    assert not run_dir.exists()  # refused before Hydra made the run's directory


@pytest.mark.parametrize("typed", ["ckpt_pth", "checkpoint"])
@pytest.mark.parametrize("entry", ["eval", "translate"])
def test_every_entry_point_checks_its_command_line(entry, typed):
    done = subprocess.run(
        [sys.executable, "-m", f"seq2seq_lab.{entry}", f"{typed}=x.ckpt"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == f"error: {typed}=x.ckpt: no such key; did you mean ckpt_path?\n"


def test_an_experiment_without_m_warns_that_its_grid_is_skipped_and_runs(tmp_path):
    missing = tmp_path / "nope.ckpt"  # stops the run at its first check, after the warning
    run_dir = tmp_path / "run"
    done = run_train("experiment=e2_reversal", f"ckpt_path={missing}", f"hydra.run.dir={run_dir}")
    lines = done.stderr.splitlines()
    assert lines[0] == (
        "warning: experiment=e2_reversal is a sweep grid (model=plain,bahdanau "
        "model.reverse_source=false,true seed=1,2,3) run by -m; without it this trains one "
        "job, with the defaults. The whole grid: python -m seq2seq_lab.train -m "
        f"experiment=e2_reversal ckpt_path={missing}"
    )
    # the run went on: the training pipeline refused the checkpoint (and recorded it)
    assert lines[-1] == f"error: ckpt_path={missing}: no such checkpoint file"
    assert (run_dir / "results.json").is_file()


def test_an_experiment_with_its_grid_fixed_on_the_command_line_gives_no_warning(tmp_path):
    missing = tmp_path / "nope.ckpt"
    grid = ("model=plain", "model.reverse_source=true", "seed=1")
    run_dir = tmp_path / "run"
    done = run_train("experiment=e2_reversal", *grid, f"ckpt_path={missing}",
                     f"hydra.run.dir={run_dir}")  # fmt: skip
    assert "warning" not in done.stderr
    assert done.stderr.splitlines()[-1] == f"error: ckpt_path={missing}: no such checkpoint file"


def test_a_correct_command_passes_quietly():
    done = run_train("model=transformer", "trainer.max_steps=100", "--cfg", "job")
    assert done.returncode == 0 and done.stderr == ""
    assert "max_steps: 100" in done.stdout


def test_a_section_set_to_null_is_no_mistake():
    """``updates=500`` is refused (a section given one value), but null empties a section."""
    done = run_train("callbacks.early_stopping=null", "--cfg", "job")
    assert done.returncode == 0 and done.stderr == ""
    assert "  early_stopping: null" in done.stdout.splitlines()


def test_a_value_may_replace_a_section_no_key_reads():
    """``updates=500`` is refused (trainer.max_steps reads updates.synthetic), but
    trainer.max_time=DD:HH:MM:SS replaces the scale's {minutes: 10}, which nothing reads:
    Lightning takes either form (the recipe's wall-clock budget, shortened as a user would)."""
    done = run_train("trainer.max_time=00:00:05:00", "--cfg", "job")
    assert done.returncode == 0 and done.stderr == ""
    assert "  max_time: 00:00:05:00" in done.stdout.splitlines()


def test_help_lists_experiments_and_options_without_internal_bases():
    done = run_train("--help")
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert "  model: bahdanau, luong, plain, transformer" in lines
    assert "_network" not in done.stdout and "_recurrent" not in done.stdout
    assert "trainer.max_steps=N trains N optimiser updates" in done.stdout  # the budget
    assert any(line.startswith("  hydra/launcher: basic, ") for line in lines)
    for name in experiments():
        (line,) = [line for line in lines if line.startswith(f"  {name} ")]
        assert len(line.split()) > 2, line  # a title after the name
    e2 = next(line for line in lines if line.startswith("  e2_reversal "))
    assert e2.split(None, 1)[1] == "E2 source reversal (Sutskever et al. 2014)"


def test_experiment_titles_come_from_the_spec_or_the_config(tmp_path):
    from seq2seq_lab.help_text import experiment_title

    folder = tmp_path / "e9_example"
    folder.mkdir()
    (folder / "config.yaml").write_text("# @package _global_\n# E9 an example\nseed: 1\n")
    assert experiment_title(folder) == "E9 an example"
    (folder / "spec.py").write_text('SPEC = dict(title="E9 from the spec", runs=[])\n')
    assert experiment_title(folder) == "E9 from the spec"
    assert experiment_title(Path(tmp_path / "empty")) == ""


def test_flags_may_follow_overrides(tmp_path):
    """``-m`` or ``--cfg job`` after an override works as before it (Hydra's parser alone
    says "unrecognized arguments", naming the valid overrides after the flag)."""
    done = run_train("threads=1", "--cfg", "job", "seed=3")
    assert done.returncode == 0, done.stderr
    assert "seed: 3" in done.stdout.splitlines() and "threads: 1" in done.stdout.splitlines()
    sweep = tmp_path / "sweep"
    done = run_train("scale=smoke", "-m", "seed=1,2", "optim.lr=-1", f"hydra.sweep.dir={sweep}")
    assert done.stderr.splitlines() == [
        "error: optim.lr=-1: torch.optim.Adam refuses it (Invalid learning rate: -1)"
    ]  # the overrides after -m were read, the first job's checked
    assert not sweep.exists()
