"""Every command the documentation shows runs as typed (tests/documented_commands.py collects
them), with only a budget added, in a copy of the checkout with ../shared beside it and the
console a user sees (the progress bar on).

The budget (:func:`budgeted`): ``scale=smoke`` where a command trains on the built-in task; on
the real data it names, the first pairs of each split, validation every 2 updates and a few
updates or seconds of the budget's own kind (updates, ``trainer.max_time``, wall-clock
marks); two trials of a hyper-parameter search. A placeholder a reader fills in is filled with what the test made:
``RUN`` (``RUN_DIR``) a trained smoke run, ``multirun/<name>/<scale>/<time>`` the newest sweep of
``<name>`` (the documented sweep is run first where there is none), ``<data>`` ``smoke``.

A command that cannot run in a test is listed with the reason (:data:`NOT_RUN`: hours of
training, a GPU, a peer's install, a template whose values are the reader's) and checked as far as
a test can: every config it would train composed, its script parsed (``bash -n``) or its
``--help`` run. Either way a broken command fails its test; a new one is collected and run
without editing this file.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import REPO
from documented_commands import Documented, collect

from seq2seq_lab.report.grid import compose_experiment

pytestmark = pytest.mark.slow

SHARED = REPO.parent / "shared"
ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")
# One command's limit: a command over it is not one a test can run: list it in NOT_RUN.
TIMEOUT = 420
# The real-data budget: the smoke scale's cut of each split (conf/scale/smoke.yaml), and a few
# updates or seconds of the run's own kind of budget.
REAL_DATA_CUT = "'data.first_pairs={train:160,val:12,test:12}'"  # quoted: no brace expansion
REAL_DATA = re.compile(r"\b(data=multi30k|data=europarl|recipe=|scale=multi30k|data\.root=)")
TRAINS = re.compile(r"(?:python -m seq2seq_lab\.train|seq2seq-train)(?=\s|$)")
SWEEP_DIR = re.compile(r"multirun/(\w+)/(?:<scale>|\w+)/<time>")
RUN_PLACEHOLDER = re.compile(r"\bRUN(?:_DIR)?\b(?:\.\.\.)?")
# A value the reader supplies: <name>, ..., [a|b], an upper-case word that is not an
# environment variable being set (N, PATH, OVERRIDES, $OUT), a job number J in a path.
TEMPLATE = re.compile(
    r"<[a-z][\w ]*>|(?<![\w.\"])\.\.\.(?![\w.\"])|\[[^\]]*\|[^\]]*\]"
    r"|(?<![\w$])\$?[A-Z][A-Z_]*(?![\w=])|/J/"
)

# Queues of hours of training: the scale each trains at (its own, or SCALE=) and the
# experiments it runs when none is named (the configs composed in their place).
QUEUES = {
    "experiments/run_real.sh": "multi30k",
    "experiments/run_cpu.sh": "synthetic",
    "experiments/run_synthetic_v2.sh": "synthetic_v2",
}
NOT_RUN = {
    r"(?:^|\s)(?:SCALE=full|scale=full)\b": "scale=full wants a GPU (experiments/gpu/check.sh runs "
    "it on a lent one)",
    r"bash experiments/gpu/check\.sh": "runs on a lent GPU only",
    r"^(?!.*REPORT_ONLY=).*bash experiments/run_(?:real|cpu|synthetic_v2)\.sh": "a resumable queue "
    "of hours of training (its grids composed here; tests/test_queue*.py and the smoke sweeps "
    "run its parts)",
    r"bash experiments/run_quality\.sh": "the recurrent recipes' search: hours of training",
    r"bash experiments/synthetic_task/calibrate\.sh": "hours of training (4,000 updates a model)",
    r"bash experiments/e1_attention/run_europarl_long\.sh": "hours of training on Europarl",
    r"bash experiments/regenerate_reports\.sh": "redraws every committed report: minutes, over "
    "the suite's budget (tests/test_report_*.py run the engine)",
    r"python experiments/benchmarks/": "a benchmark (minutes of timed runs; "
    "experiments/benchmarks/test_*.py run each script at a toy size)",
    r"position_tables\.py runs/|alignment --write experiments/": "reads the checkpoints of "
    "committed runs, which stay on the disk of the machine that trained them",
    r"wandb_workspace .*--save": "uploads a view to W&B: needs an account's key (the same "
    "command without --save runs)",
    r"^(?:seq2seq-|python -m seq2seq_lab\.)(?:eval|translate|report)$": "names the entry point, "
    "which reads a checkpoint (ckpt_path=) or a runs folder given to it (the commands that "
    "give one run it)",
}
# Values a reader supplies that a test can supply too.
FILLED = {r"--entity ME\b": "--entity a-reader"}
# A comparison that is not in experiments/: the reader's own, made by the steps the
# documentation gives before it (tests/test_add_a_comparison.py makes one and runs that flow).
COMPARISON = re.compile(r"(?:experiment=|multirun/)(\w+)")


@dataclass
class Plan:
    """How a documented command is checked: ``run`` (the shell text, budget added), or the
    reason it is not run and the checks made instead."""

    command: Documented
    run: str | None = None
    reason: str | None = None
    checks: list[str] = field(default_factory=list)  # shell lines that must exit 0


def budgeted(text: str) -> str:
    """``text`` with the budget of the module docstring added."""
    if not TRAINS.search(text) or "--help" in text.split():
        return text
    extra = []
    if REAL_DATA.search(text):
        # validation every 2 updates: a run this short validates, as the user's run does
        extra += [REAL_DATA_CUT, "val_every=2", *_real_data_budget(text)]
    else:
        text = re.sub(r"(?<=\s)scale=\w+", "", text)
        extra.append("scale=smoke")
    if "hparams_search=" in text:
        extra.append("hydra.sweeper.n_trials=2")
    return " ".join([*text.split(), *extra])


def _real_data_budget(text: str) -> list[str]:
    """A few updates or seconds, of the kind of budget the composed run has."""
    cfg = _compose_train(_overrides(text))
    if cfg.trainer.max_steps is not None and cfg.trainer.max_steps > 0:
        return ["trainer.max_steps=3"]
    if "wall_clock" in (cfg.get("callbacks") or {}):
        return ["'callbacks.wall_clock.minutes=[0.1]'"]
    if cfg.trainer.max_time is not None:
        return ["trainer.max_time=00:00:00:06"]
    return ["trainer.max_steps=3"]


def _overrides(text: str) -> list[str]:
    """The Hydra overrides of a train command (``key=value`` words after the entry point)."""
    words = shlex.split(TRAINS.split(text, maxsplit=1)[1]) if TRAINS.search(text) else []
    return [w for w in words if "=" in w and not w.startswith("-") and not TEMPLATE.search(w)]


def _compose_train(overrides: list[str]):
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(str(REPO / "conf"), version_base="1.3"):
        return compose("train", overrides=overrides)


def plan(command: Documented) -> Plan:
    text = command.text
    for pattern, reason in NOT_RUN.items():
        if re.search(pattern, text):
            return Plan(command, reason=reason, checks=_checks_instead(text))
    named = COMPARISON.search(text)
    if named and not (REPO / "experiments" / named.group(1)).is_dir():
        return Plan(command, reason=f"{named.group(1)} is the reader's own comparison, made by the "
                    "steps before it (tests/test_add_a_comparison.py runs that flow)",
                    checks=_checks_instead(text))  # fmt: skip
    for placeholder, value in FILLED.items():
        text = re.sub(placeholder, value, text)
    filled = SWEEP_DIR.sub(lambda m: f"$(ls -d multirun/{m.group(1)}/smoke/* | tail -1)", text)
    filled = RUN_PLACEHOLDER.sub("$run", filled).replace("<data>", "smoke")
    if TEMPLATE.search(filled):
        return Plan(
            command,
            reason=f"a template: {TEMPLATE.search(filled).group(0)!r} is the reader's own value",
            checks=_checks_instead(text),
        )
    return Plan(command, run=budgeted(filled))


def _checks_instead(text: str) -> list[str]:
    """What a test can check of a command it cannot run: every config it would train composes,
    its script parses, its entry point answers ``--help``."""
    words = shlex.split(text.split("|")[-1])
    env = dict(w.split("=", 1) for w in words if re.match(r"^[A-Z_]+=", w))
    script = next((w for w in words if w.startswith("experiments/") and w.endswith(".sh")), None)
    checks: list[str] = []
    if script:
        checks.append(f"bash -n {script}")
        named = [w for w in words[words.index(script) + 1 :] if not w.startswith("-")]
        if script in QUEUES:
            scale = env.get("SCALE", QUEUES[script])
            names = named or _all_experiments()
            extra = _first_values(shlex.split(env.get("OVERRIDES", "")))
            checks += [f"compose {name} {scale} {' '.join(extra)}".strip() for name in names]
        return checks
    named = re.search(r"experiment=(\w+)", text)
    if TRAINS.search(text) and named and (REPO / "experiments" / named.group(1)).is_dir():
        scale = re.search(r"scale=(\w+)", text)
        return [f"compose {named.group(1)} {scale.group(1) if scale else 'synthetic'}"]
    entry = re.search(r"python (-m [\w.]+|experiments/\S+\.py)|(seq2seq-\w+)", text)
    if entry:
        checks.append(f"{'python ' + entry.group(1) if entry.group(1) else entry.group(2)} --help")
    return checks


def _first_values(overrides: list[str]) -> list[str]:
    """A sweep's overrides as one job of it (``model=a,b`` -> ``model=a``), to compose."""
    return [re.sub(r"^([^=]+=)([^,\[{]*),.*$", r"\1\2", o) for o in overrides]


def _all_experiments() -> list[str]:
    return sorted(p.parent.name for p in (REPO / "experiments").glob("*/config.yaml"))


def plans() -> list[Plan]:
    """Every documented command's plan; commands that run the same text once budgeted (a sweep
    at ``scale=smoke`` and at ``scale=synthetic``) are one test with the places of both."""
    merged: dict[str, Plan] = {}
    for command in collect(REPO):
        p = plan(command)
        key = p.run or p.command.text
        if key in merged:
            first = merged[key]
            places = first.command.places + command.places
            first.command = Documented(first.command.text, places)
        else:
            merged[key] = p
    return list(merged.values())


PLANS = plans()


def _id(p: Plan) -> str:
    return p.command.places[0]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A copy of the checkout's files (tracked and new), ../shared beside it: what the commands
    write (outputs/, multirun/, reports) lands here, not in the repository."""
    root = tmp_path_factory.mktemp("documented") / "checkout"
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split("\0")  # fmt: skip
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    if SHARED.exists():
        (root.parent / "shared").symlink_to(SHARED.resolve())
    return root


@pytest.fixture(scope="module")
def environment(checkout, tmp_path_factory) -> dict[str, str]:
    """The shell a user has after ``source .venv/bin/activate``, pointed at the copy."""
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(checkout / "src"),  # the copy's package, so its conf/ and experiments/
        "PYTHON": sys.executable,
        "SEQ2SEQ_LAB_CACHE": str(tmp_path_factory.mktemp("cache")),
        "WANDB_MODE": "offline",
        "PYTHONUNBUFFERED": "1",
        "COLUMNS": "200",
        "FORCE_COLOR": "1",  # rich draws the progress bar as in a terminal
    }


def _shell(line: str, checkout: Path, environment: dict[str, str], stdin: str = ""):
    return subprocess.run(
        ["bash", "-c", line], cwd=checkout, env=environment, input=stdin,
        capture_output=True, text=True, timeout=TIMEOUT,
    )  # fmt: skip


@pytest.fixture(scope="module")
def trained_run(checkout, environment) -> Path:
    """``RUN``: a smoke run with step checkpoints kept (what docs/usage.md's commands read)."""
    run = checkout / "outputs" / "documented-run"
    proc = _shell(
        "python -m seq2seq_lab.train scale=smoke callbacks.last_checkpoint.keep_last=5 "
        f"callbacks.last_checkpoint.every_n_train_steps=1 hydra.run.dir={run}",
        checkout, environment,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    sources = [
        line.split("\t")[0] for line in (run / "hypotheses.test.txt").read_text().splitlines()
    ]
    (checkout / "src.txt").write_text("\n".join(sources[:3]) + "\n")  # input=src.txt
    return run


def sweeps_or_their_reports(p: Plan) -> bool:
    """A sweep, or a command that reads one (multirun/<name>/...): the minutes of the suite's
    longest file, run in a file of their own (test_documented_sweeps.py) so that the two
    pytest workers share them (--dist loadfile keeps a file on one worker)."""
    return bool(is_sweep(p.run or "") or SWEEP_DIR.search(p.command.text))


def is_sweep(text: str) -> bool:
    """A train command with Hydra's ``-m`` (not ``python -m``)."""
    return bool(re.search(r"(?:seq2seq_lab\.train|seq2seq-train)(?:\s.*)?\s-m(?:\s|$)", text))


@pytest.mark.parametrize(
    "p", [p for p in PLANS if p.run and not sweeps_or_their_reports(p)], ids=_id
)
def test_a_documented_command_runs_as_typed(p, checkout, environment, trained_run):
    runs_as_typed(p, checkout, {**environment, "run": str(trained_run)})


def runs_as_typed(p: Plan, checkout: Path, environment: dict[str, str]) -> None:
    """Run ``p`` in ``checkout`` (the sweep a report command reads first, where there is none
    yet) and check its exit status and closing lines."""
    text = p.run
    sweep = SWEEP_DIR.search(p.command.text)
    if sweep and not list((checkout / "multirun" / sweep.group(1) / "smoke").glob("*")):
        made = _shell(budgeted(f"python -m seq2seq_lab.train -m experiment={sweep.group(1)}"),
                      checkout, environment)  # fmt: skip
        assert made.returncode == 0, made.stderr[-3000:]
    proc = _shell(text, checkout, environment, stdin="")
    where = ", ".join(p.command.places)
    assert proc.returncode == 0, f"{where}: {text}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    if TRAINS.search(text) and "--help" not in text.split():
        _closing_lines_shown(text, ANSI.sub("", proc.stdout + proc.stderr), where)


def _closing_lines_shown(text: str, console: str, where: str) -> None:
    """A run, as a user starts it, trains, validates, tests and ends on where things went; a
    sweep ends on its directory and its report command (seq2seq_lab/console.py)."""
    if is_sweep(text):
        assert "report: python -m seq2seq_lab.report" in console, f"{where}: {console[-2000:]}"
    elif "debug=" not in text:
        assert re.search(r"val/bleu:\s+\d", console), f"{where}: no validation: {console[-2000:]}"
        assert re.search(r"completed, test BLEU \d", console), f"{where}: {console[-2000:]}"
        assert "report: python -m seq2seq_lab.report" in console, f"{where}: {console[-2000:]}"


@pytest.mark.parametrize("p", [p for p in PLANS if not p.run], ids=_id)
def test_a_documented_command_not_run_is_checked(p, checkout, environment):
    assert p.reason and p.checks, f"{p.command.places}: {p.command.text}: nothing checked"
    for check in p.checks:
        if check.startswith("compose "):
            _, name, scale, *extra = check.split()
            cfg = compose_experiment(name, scale, extra)
            assert cfg.experiment_name, check
            continue
        if check not in _PASSED:  # the same --help or script for several commands: once
            proc = _shell(check, checkout, environment)
            assert proc.returncode == 0, f"{p.command.places}: {check}\n{proc.stderr[-2000:]}"
            _PASSED.add(check)


_PASSED: set[str] = set()


def test_every_command_is_run_or_listed_with_a_reason():
    """The listing a reader of this suite sees: no command falls through."""
    assert len(PLANS) > 50
    ran = [p for p in PLANS if p.run]
    assert ran and all((p.run is None) == bool(p.reason) for p in PLANS)
    assert any(sweeps_or_their_reports(p) for p in ran)  # test_documented_sweeps.py has some
    assert any("recipe=transformer_multi30k_cpu" in p.run for p in ran)


def test_the_collector_finds_a_new_command_in_a_code_block_a_span_and_a_config(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "conf" / "recipe").mkdir(parents=True)
    (tmp_path / "README.md").write_text(
        "Run `python -m seq2seq_lab.train model=luong` first.\n\n```bash\n"
        "MINUTES=5 bash experiments/run_real.sh e1_attention \\\n  e2_reversal   # both\n```\n"
    )
    (tmp_path / "docs" / "x.md").write_text("```\n$ seq2seq-eval ckpt_path=RUN/x.ckpt\n```\n")
    (tmp_path / "conf" / "recipe" / "r.yaml").write_text("#   python experiments/a.py x=1\n")
    found = {c.text: c.places for c in collect(tmp_path)}
    assert found == {
        "python -m seq2seq_lab.train model=luong": ("README.md:1",),
        "MINUTES=5 bash experiments/run_real.sh e1_attention e2_reversal": ("README.md:4",),
        "seq2seq-eval ckpt_path=RUN/x.ckpt": ("docs/x.md:2",),
        "python experiments/a.py x=1": ("conf/recipe/r.yaml:1",),
    }
