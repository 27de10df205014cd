"""Each comparison's smoke grid runs end to end through `-m` (trimmed to two jobs), and the
report generator turns the runs into markdown and PNGs; a diverging job is reported as such.
The sweepers and launchers a sweep can use run here too (Optuna, joblib, submitit_local)."""

from __future__ import annotations

import functools
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli, tiny_overrides
from report_support import write_run

from seq2seq_lab.report import quality
from seq2seq_lab.report.grid import SEED, axes, compose_experiment
from seq2seq_lab.report.runs import find_runs
from seq2seq_lab.report.spec import Comparison
from seq2seq_lab.report.specs import own_specs

SPECS = own_specs()

pytestmark = pytest.mark.slow

# E4's two jobs: one forced to diverge (lr 1000), the other not: a diverging job is recorded
# and the sweep goes on.
DIVERGING = [
    "model.norm=post",
    "schedule.linear_warmup=false",
    "optim.lr=5e-4,1000",
    "model.encoder_layers=2",
    "module.divergence.patience=2",
    "trainer.gradient_clip_val=null",
]


def trimmed(experiment: str) -> list[str]:
    """Two jobs of the comparison's smoke grid (command-line values replace the experiment's
    hydra.sweeper.params of the same key): the first swept axis at its first two values,
    every other axis at its first."""
    if experiment == "e4_norm_warmup":
        return DIVERGING
    grid = [a for a in axes(compose_experiment(experiment, "smoke")) if a.key != SEED]
    first, *rest = grid
    return [f"{first.key}={','.join(first.values[:2])}", *(f"{a.key}={a.values[0]}" for a in rest)]


@functools.cache
def trims() -> dict[str, list[str]]:
    """Every comparison (discovered: experiments/<name>/), trimmed to two jobs."""
    return {name: trimmed(name) for name in sorted(SPECS)}


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sweeps")
    cache = tmp_path_factory.mktemp("sweep_cache")
    for experiment, trim in trims().items():
        proc = run_cli(
            "train",
            "-m",
            f"experiment={experiment}",
            "scale=smoke",
            f"paths.cache_dir={cache}",
            f"hydra.sweep.dir={root / experiment}",
            *trim,
        )
        assert proc.returncode == 0, f"{experiment}: {proc.stderr[-3000:]}"
    return root


@pytest.mark.parametrize("experiment", sorted(SPECS))
def test_smoke_grid_runs_every_job(sweeps, experiment):
    runs = sorted((sweeps / experiment).glob("*/results.json"))
    assert len(runs) == 2
    results = [json.loads(p.read_text()) for p in runs]
    assert {r["experiment"] for r in results} == {experiment}
    assert len({r["variant"] for r in results}) == 2


def test_a_diverging_job_is_recorded_and_the_sweep_goes_on(sweeps):
    results = [
        json.loads(p.read_text()) for p in (sweeps / "e4_norm_warmup").glob("*/results.json")
    ]
    by_lr = {r["config"]["optim"]["lr"]: r for r in results}
    assert by_lr[1000]["status"] == "diverged"
    assert by_lr[5e-4]["status"] == "completed"


def test_report_from_the_smoke_sweeps(sweeps, tmp_path):
    proc = run_cli("report", str(sweeps), "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    for experiment, trim in trims().items():
        report = tmp_path / experiment / "report.md"
        assert report.is_file(), experiment
        text = report.read_text()
        # the sweep command rebuilt from the runs: the experiment, and the keys it was cut to
        # swept over several values
        (command,) = [x for x in text.splitlines() if x.startswith("python -m seq2seq_lab")]
        tokens = shlex.split(command)
        assert tokens[3] == "-m" and f"experiment={experiment}" in tokens
        for key in (o.split("=")[0] for o in trim if "," in o):
            assert any(t.startswith(f"{key}=") and "," in t for t in tokens), (key, command)
        assert "nrefs:1" in text  # the sacrebleu signature
        # the verdict written is the one the spec's rule gives on these runs
        spec = SPECS[experiment]
        verdict = spec.verdict(Comparison(spec, find_runs(sweeps / experiment)[0]))
        assert f"**Verdict: {verdict.outcome}**" in text
        assert f"**Rule:** {verdict.rule}" in text
        assert list((tmp_path / experiment).glob("*.png")), experiment
    e4 = (tmp_path / "e4_norm_warmup" / "report.md").read_text()
    assert "2 runs (1 completed, 1 diverged)" in e4
    assert (tmp_path / "README.md").is_file()


def test_optuna_search_with_in_memory_storage(tmp_path):
    proc = run_cli(
        "train",
        "-m",
        "hparams_search=optuna",
        "scale=smoke",
        "hydra.sweeper.n_trials=2",
        "hydra.sweeper.sampler.n_startup_trials=2",
        f"paths.cache_dir={tmp_path / 'cache'}",
        f"hydra.sweep.dir={tmp_path / 'optuna'}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(list((tmp_path / "optuna").glob("*/results.json"))) == 2
    assert (tmp_path / "optuna" / "optimization_results.yaml").is_file()


def test_joblib_launcher_runs_jobs_in_parallel_processes(tmp_path):
    proc = run_cli(
        "train",
        "-m",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        "threads=1",
        "scale=smoke",
        "model=plain,luong",
        f"paths.cache_dir={tmp_path / 'cache'}",
        f"hydra.sweep.dir={tmp_path / 'joblib'}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    statuses = [
        json.loads(p.read_text())["status"] for p in (tmp_path / "joblib").glob("*/results.json")
    ]
    assert statuses == ["completed", "completed"]


def test_submitit_local_runs_every_job_of_a_sweep_into_one_sweep_directory(tmp_path, cache_dir):
    # submitit runs each job in a process of its own, the path a SLURM sweep
    # (hydra/launcher=slurm) takes, without a cluster
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="extra `sweeps`")
    proc = run_cli(
        "train",
        "-m",
        "hydra/launcher=submitit_local",
        "hydra.launcher.timeout_min=10",
        *tiny_overrides("bahdanau", "trainer.max_steps=2", "threads=1"),
        "seed=1,2",
        f"paths.cache_dir={cache_dir}",
        cwd=tmp_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    # both jobs share the sweep directory the launcher named, although each resolved its
    # config in a process of its own
    (sweep_dir,) = (tmp_path / "multirun" / "train").iterdir()
    records = {p.parent.name: json.loads(p.read_text()) for p in sweep_dir.glob("*/results.json")}
    assert sorted(records) == ["0", "1"]
    assert {r["seed"] for r in records.values()} == {1, 2}
    for record in records.values():
        assert record["status"] == "completed", record.get("error")
        assert record["run_dir"] == "${paths.output_dir}"  # the directory it lies in
        assert record["test"]["sentences"] == 12


def test_run_cpu_sh_runs_the_named_grids_and_writes_reports_and_wall_times(tmp_path, cache_dir):
    """The one command of the cpu grid, on a smoke-sized cut of E1 (its sweep, report,
    verdict.json and wall-time records), kept out of the repository's experiments/."""
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "RESULTS": str(tmp_path / "experiments"),
        "MULTIRUN": str(tmp_path / "multirun"),
        "OVERRIDES": f"scale=smoke model=plain,bahdanau seeds=1 paths.cache_dir={cache_dir}",
    }
    proc = subprocess.run(["bash", str(REPO / "experiments" / "run_cpu.sh"), "e1_attention"],
                          env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp_path / "experiments" / "e1_attention" / "results/synthetic"
    assert (out / "e1_attention" / "report.md").is_file()
    assert json.loads((out / "e1_attention" / "verdict.json").read_text())["verdict"]
    assert "jobs: 2" in (out / "wall_time.txt").read_text()
    grid = (tmp_path / "experiments" / "cpu_grid_wall_time.txt").read_text()
    assert "experiments: e1_attention" in grid and "wall_seconds: " in grid
    bad = subprocess.run(["bash", str(REPO / "experiments" / "run_cpu.sh"), "e9_nothing"],
                         env=env, capture_output=True, text=True)  # fmt: skip
    assert bad.returncode == 2 and "no experiments/e9_nothing/config.yaml" in bad.stderr


def test_run_real_sh_adds_a_seed_as_a_sweep_of_its_own_that_the_report_reads(tmp_path, cache_dir):
    """SWEEP: a later seed of some models goes to runs/<SWEEP>/ (the grid's own jobs keep
    their numbers), its pass counts its own jobs, the grid's next pass still finds its jobs
    all finished, and the one report reads both sweeps. A number is refused: it would be one
    of the grid's job directories."""
    env = {**os.environ, "PYTHON": sys.executable, "RESULTS": str(tmp_path / "experiments"),
           "SCALE": "smoke", "DATA": "smoke"}  # fmt: skip
    script = ["bash", str(REPO / "experiments" / "run_real.sh"), "e1_attention"]
    common = f"model=plain paths.cache_dir={cache_dir}"

    def run_real(overrides: str, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(script, env={**env, "OVERRIDES": overrides, **extra},
                              capture_output=True, text=True, timeout=600)  # fmt: skip

    out = tmp_path / "experiments" / "e1_attention" / "results" / "smoke"
    for overrides, extra in [(f"{common} seed=1", {}), (f"{common} seed=2", {"SWEEP": "seed2"})]:
        proc = run_real(overrides, **extra)
        assert proc.returncode == 0, proc.stderr[-3000:]
    again = run_real(f"{common} seed=1")
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"all 1 runs finished before, no pass -> {out}" in again.stdout
    seeds = {
        r.path.relative_to(out / "runs").as_posix(): r.seed for r in find_runs(out / "runs")[0]
    }
    assert seeds == {"0": 1, "seed2/0": 2}
    passes = (out / "wall_time.txt").read_text().splitlines()[1:]
    assert [p.split(", exit:")[0].split("runs finished: ")[1] for p in passes] == ["1 of 1"] * 2
    report = (out / "e1_attention" / "report.md").read_text()
    assert "- **Seeds:** 1, 2" in report and "# 1 run in seed2\n" in report
    bad = run_real(common, SWEEP="4")
    assert bad.returncode == 2
    assert bad.stderr.startswith("run_real.sh: SWEEP=4: expected a name starting with a letter")


@pytest.mark.parametrize(
    "script",
    [
        "run_cpu.sh",
        "run_real.sh",
        "run_synthetic_v2.sh",
        "e1_attention/run_europarl_long.sh",
        "run_quality.sh",
    ],
)
def test_experiment_scripts_stop_before_any_pass_without_an_interpreter_that_has_the_package(
    tmp_path, script
):
    """A fresh clone before scripts/setup.sh: one line naming the cure, nothing recorded (a
    pass of 0 seconds used to be appended to wall_time.txt)."""
    env = {**os.environ, "PYTHON": "/bin/false", "RESULTS": str(tmp_path / "experiments")}
    proc = subprocess.run(["bash", str(REPO / "experiments" / script), "e4_norm_warmup"],
                          env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"{Path(script).name}: /bin/false cannot import seq2seq_lab: run bash scripts/setup.sh first "
        "(or set PYTHON)"
    )
    assert not (tmp_path / "experiments").exists()


@pytest.mark.parametrize(
    "left_seconds, start_minutes, too_late",
    [
        (600, "15", True),
        (600, "5", False),
        (100, None, True),
        (300, None, False),
        (None, "15", False),
    ],
)
def test_queue_does_not_begin_a_stage_with_less_than_start_minutes_left(
    left_seconds, start_minutes, too_late
):
    """queue.sh's queue_too_late: START_MINUTES (default 2) before the deadline; never without
    a deadline (no MINUTES)."""
    setup = "" if left_seconds is None else f"deadline=$(( $(date +%s) + {left_seconds} ));"
    env = {k: v for k, v in os.environ.items() if k != "START_MINUTES"}
    if start_minutes is not None:
        env["START_MINUTES"] = start_minutes
    queue = shlex.quote(str(REPO / "experiments" / "queue.sh"))
    proc = subprocess.run(["bash", "-c", f"source {queue}; {setup} queue_too_late"], env=env)
    assert (proc.returncode == 0) == too_late


@pytest.mark.parametrize("left_seconds, begins", [(600, True), (60, False), (None, True)])
def test_the_next_stage_gets_what_is_left_of_the_budget(left_seconds, begins):
    """queue.sh's queue_next_stage: with START_MINUTES=5 it refuses a stage at one minute left
    (naming it) and with ten minutes left exports MINUTES as those ten; without a deadline it
    leaves MINUTES alone."""
    setup = "" if left_seconds is None else f"deadline=$(( $(date +%s) + {left_seconds} ));"
    queue = shlex.quote(str(REPO / "experiments" / "queue.sh"))
    script = f"source {queue}; {setup} queue_next_stage caller.sh stage-b && echo $MINUTES"
    env = {**os.environ, "START_MINUTES": "5", "MINUTES": "170"}
    proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
    assert (proc.returncode == 0) == begins
    if not begins:
        assert "caller.sh: stage-b not started" in proc.stderr
    elif left_seconds is None:
        assert proc.stdout.strip() == "170"
    else:
        assert 9.9 <= float(proc.stdout) <= 10.0


@pytest.mark.parametrize("finished, clocked, passes", [(2, 0, 0), (1, 0, 1), (2, 1, 1)])
def test_a_queue_pass_over_a_finished_grid_trains_and_records_nothing(
    tmp_path, finished, clocked, passes
):
    """queue.sh's queue_pass: when every one of the grid's JOBS runs had finished, the sweep
    is not started and wall_time.txt gets no line (a 12-second pass over a finished grid used
    to count as one more pass); with a run left it runs and records its pass, and so with a
    run its wall-clock cap ended (the sweep continues it if its cap is now raised)."""
    runs = tmp_path / "out" / "runs"
    for seed in range(finished):
        path = write_run(runs / str(seed), experiment="e1_attention", variant="plain",
                         family="plain", seed=seed + 1)  # fmt: skip
        if seed < clocked:
            results = json.loads((path / "results.json").read_text())
            results.setdefault("training", {})["stopped_by"] = "trainer.max_time"
            (path / "results.json").write_text(json.dumps(results))
    queue = shlex.quote(str(REPO / "experiments" / "queue.sh"))
    marker = tmp_path / "swept"
    script = (f"source {queue}; queue_pass 'experiment: e1' {tmp_path / 'out'} {runs} 2 "
              f"touch {marker}")  # fmt: skip
    proc = subprocess.run(["bash", "-c", script], env={**os.environ, "PY": sys.executable},
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert marker.exists() == bool(passes)
    wall = tmp_path / "out" / "wall_time.txt"
    lines = wall.read_text().splitlines()[1:] if wall.exists() else []
    assert len(lines) == passes
    if passes:
        assert f"runs finished: {finished} of 2" in lines[0]
    else:
        assert (
            proc.stdout.strip()
            == f"experiment: e1: all 2 runs finished before, no pass -> {tmp_path / 'out'}"
        )


def test_the_quality_search_stops_on_a_machine_of_another_cpu(tmp_path):
    """run_quality.sh's budget is 30 minutes of wall clock: on a CPU other than the finished
    runs' it stops before any pass (one line, nothing recorded, no run added)."""
    out = tmp_path / "results-quality"
    write_run(out / "search" / "0", experiment=quality.EXPERIMENT, variant="luong_base",
              family="luong", cpu=("Elsewhere CPU", ["AVX2"]))  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "ANY_CPU"}
    proc = subprocess.run(["bash", str(REPO / "experiments" / "run_quality.sh")],
                          env={**env, "OUT": str(out)}, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith(
        f"error: {out}: the finished runs trained on Elsewhere CPU (AVX2), this machine is "
    )
    assert sorted(p.name for p in out.rglob("*") if p.is_file()) == ["results.json"]
