"""Seeds -> variants: mean +- std, status counts, the BLEU the rules see; loading runs;
the sweep command rebuilt from overrides."""

from __future__ import annotations

import shlex
import statistics

import pytest
from report_support import write_run

from seq2seq_lab.errors import UserError
from seq2seq_lab.report.aggregate import bucket_key, group_variants, mean_std, rule_bleu
from seq2seq_lab.report.commands import sweep_command, sweep_commands
from seq2seq_lab.report.runs import find_runs


def test_mean_std_is_the_sample_statistics_of_the_values_present():
    ms = mean_std([20.0, 22.0, None, 27.0, float("nan")])
    assert ms.n == 3
    assert ms.mean == pytest.approx(23.0)
    assert ms.std == pytest.approx(statistics.stdev([20.0, 22.0, 27.0]))  # n - 1
    assert ms.std == pytest.approx(3.605551, abs=1e-6)
    assert ms.format() == "23.00 ± 3.61"
    assert mean_std([5.0]).format() == "5.00"  # one seed: no spread to show
    assert mean_std([]).format() == "—"
    assert mean_std([None]).mean is None


def test_variants_group_seeds_and_count_statuses(tmp_path):
    for seed, status, bleu in [
        (1, "completed", 20.0),
        (2, "completed", 24.0),
        (3, "diverged", None),
    ]:
        write_run(
            tmp_path / f"a{seed}",
            experiment="e",
            variant="a",
            family="bahdanau",
            seed=seed,
            status=status,
            bleu=bleu,
            tested=bleu is not None,
        )
    write_run(tmp_path / "b1", experiment="e", variant="b", family="luong", status="failed")
    runs, unreadable = find_runs(tmp_path)
    assert len(runs) == 4 and not unreadable
    a, b = sorted(group_variants(runs, lambda r: {"family": r.family}), key=lambda v: v.label)
    assert a.status_text() == "2 completed, 1 diverged"
    assert a.seeds == [1, 2, 3]
    assert a.scores("bleu").format() == f"22.00 ± {statistics.stdev([20.0, 24.0]):.2f}"
    assert a.bleu == pytest.approx((20.0 + 24.0 + 0.0) / 3)  # the diverged run counts as 0
    assert a.diverged_fraction == pytest.approx(1 / 3)
    assert b.status_text() == "1 failed"
    assert b.bleu is None and b.role == {"family": "luong"}  # family read from model._target_
    assert [rule_bleu(r) for r in a.runs] == [20.0, 24.0, 0.0]


def test_an_interrupted_run_is_listed_apart_and_none_of_its_numbers_count(tmp_path):
    # stopped by a signal before it finished: like a failed run, not data (a score it may
    # have recorded on the way out does not count)
    write_run(tmp_path / "a1", experiment="e", variant="a", family="luong", seed=1, bleu=20.0)
    write_run(
        tmp_path / "a2",
        experiment="e",
        variant="a",
        family="luong",
        seed=2,
        status="interrupted",
        bleu=30.0,
        validation=[{"step": 10, "entropy": {"encoder": [[1.0]]}}],
    )
    runs, unreadable = find_runs(tmp_path)
    assert len(runs) == 2 and not unreadable
    (a,) = group_variants(runs, lambda r: {"family": r.family})
    assert a.status_text() == "1 completed, 1 interrupted"
    assert a.scores("bleu").format() == "20.00" and a.bleu == pytest.approx(20.0)
    assert a.diverged_fraction == 0.0
    assert a.diagnostics() == []
    assert [rule_bleu(r) for r in a.runs] == [20.0, None]


def test_one_label_with_two_settings_becomes_two_rows(tmp_path):
    for i, norm in enumerate(["post", "pre"]):
        write_run(
            tmp_path / str(i),
            experiment="e",
            variant="same",
            family="transformer",
            config={"model.norm": norm},
            bleu=10.0,
        )
    runs, _ = find_runs(tmp_path)
    variants = group_variants(runs, lambda r: {"norm": r.config_value("model.norm")})
    assert sorted(v.label for v in variants) == ["same (norm=post)", "same (norm=pre)"]


def test_bleu_by_length_averages_seeds_per_bucket(tmp_path):
    for seed, (short, long) in enumerate([(20.0, 10.0), (22.0, 14.0)], 1):
        write_run(
            tmp_path / str(seed),
            experiment="e",
            variant="a",
            family="plain",
            seed=seed,
            bleu=short,
            long_bleu=long,
        )
    runs, _ = find_runs(tmp_path)
    (variant,) = group_variants(runs, lambda r: {})
    buckets = variant.bleu_by_length()
    assert list(buckets) == ["1-10", "41-50"]
    assert buckets["41-50"].mean == pytest.approx(12.0)
    assert variant.bucket_counts() == {"1-10": 100, "41-50": 100}
    assert sorted(["51+", "11-20", "1-10"], key=bucket_key) == ["1-10", "11-20", "51+"]


def test_unreadable_results_are_reported_not_fatal(tmp_path):
    write_run(tmp_path / "ok", experiment="e", variant="a", family="plain", bleu=1.0)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.json").write_text("{ truncated")
    runs, unreadable = find_runs(tmp_path)
    assert [r.path.name for r in runs] == ["ok"]
    assert [u.path.parent.name for u in unreadable] == ["bad"]


def test_missing_path_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="no such directory"):
        find_runs(tmp_path / "nowhere")


def test_sweep_command_writes_common_overrides_once_and_sweeps_the_rest(tmp_path):
    (tmp_path / "multirun.yaml").write_text("hydra: {}\n")
    jobs = [(m, s) for m in ("plain", "bahdanau") for s in (1, 2)]
    for num, (model, seed) in enumerate(jobs):
        write_run(
            tmp_path / str(num),
            experiment="e1_attention",
            variant=model,
            family=model,
            seed=seed,
            overrides=[
                f"model={model}",
                f"seed={seed}",
                "experiment=e1_attention",
                "scale=cpu",
            ],  # scale by its old name
        )
    runs, _ = find_runs(tmp_path)
    (command,) = sweep_commands(runs)
    assert command.directory == tmp_path and command.runs == 4
    assert command.command == (
        "python -m seq2seq_lab.train -m experiment=e1_attention scale=synthetic "
        "model=plain,bahdanau seed=1,2"
    )
    single = sweep_command(runs[:1], multirun=False)
    assert (
        single
        == "python -m seq2seq_lab.train model=plain seed=1 experiment=e1_attention scale=synthetic"
    )


def test_sweep_command_quotes_for_the_shell_and_orders_jobs_naturally(tmp_path):
    (tmp_path / "multirun.yaml").write_text("hydra: {}\n")
    for num in (2, 10):
        write_run(
            tmp_path / str(num),
            experiment="e",
            variant="v",
            family="plain",
            seed=num,
            overrides=[f"seed={num}", "~callbacks.progress_bar", "trainer.max_time='00:00:05:00'"],
        )
    runs, _ = find_runs(tmp_path)
    (command,) = sweep_commands(runs)
    # the shell gives Hydra back exactly the recorded overrides, job 2 before job 10
    assert shlex.split(command.command)[3:] == [
        "-m",
        "~callbacks.progress_bar",
        "trainer.max_time='00:00:05:00'",
        "seed=2,10",
    ]


def test_pooling_runs_of_different_settings_is_detected(tmp_path):
    for seed, hidden in [(1, 32), (2, 32), (3, 64)]:
        write_run(
            tmp_path / str(seed),
            experiment="e",
            variant="a",
            family="plain",
            seed=seed,
            config={
                "data.seed": seed,  # follows the run seed: not a difference
                "paths.output_dir": str(tmp_path / str(seed)),
                "trainer.default_root_dir": str(tmp_path / str(seed)),
                "model.hidden_size": hidden,
            },
            bleu=1.0,
        )
    runs, _ = find_runs(tmp_path)
    (variant,) = group_variants(runs, lambda r: {})
    assert variant.config_differences() == ["model.hidden_size"]
    (same,) = group_variants(runs[:2], lambda r: {})
    assert same.config_differences() == []


def test_a_run_continued_from_its_own_last_ckpt_pools_with_the_uninterrupted_ones(tmp_path):
    """A queue continues an interrupted run from its own last.ckpt (``ckpt_path`` and the CSV
    logger's ``resume_from`` set, portable): the same setting. Starting from another run's
    checkpoint is a different setting."""
    starts = {1: None, 2: "${paths.output_dir}/checkpoints/last.ckpt", 3: "/elsewhere/best.ckpt"}
    for seed, start in starts.items():
        write_run(
            tmp_path / str(seed),
            experiment="e",
            variant="a",
            family="plain",
            seed=seed,
            config={"ckpt_path": start, "logger.csv.resume_from": start},
            bleu=1.0,
        )
    runs, _ = find_runs(tmp_path)
    by_seed = {run.seed: run for run in runs}
    (continued,) = group_variants([by_seed[1], by_seed[2]], lambda r: {})
    assert continued.config_differences() == []
    (other_start,) = group_variants([by_seed[1], by_seed[3]], lambda r: {})
    assert other_start.config_differences() == ["ckpt_path", "logger.csv.resume_from"]


def test_reuse_from_growing_between_queue_passes_is_neither_swept_nor_a_setting(tmp_path):
    """run_real.sh names the other grids present at each pass, so ``reuse_from`` grows
    between passes: the rebuilt command lists their union once, and the runs still pool."""
    (tmp_path / "multirun.yaml").write_text("hydra: {}\n")
    pools = {1: ["a/runs"], 2: ["a/runs", "b/runs"], 3: ["a/runs", "b/runs"]}
    for seed, pool in pools.items():
        listed = ",".join(f"'{p}'" for p in pool)
        write_run(
            tmp_path / str(seed),
            experiment="e",
            variant="a",
            family="plain",
            seed=seed,
            overrides=[f"seed={seed}", "resume=true", f"reuse_from=[{listed}]"],
            config={"reuse_from": pool, "resume": True},
            bleu=1.0,
        )
    runs, _ = find_runs(tmp_path)
    (command,) = sweep_commands(runs)
    assert shlex.split(command.command)[3:] == [
        "-m",
        "resume=true",
        "reuse_from=['a/runs','b/runs']",
        "seed=1,2,3",
    ]
    (variant,) = group_variants(runs, lambda r: {})
    assert variant.config_differences() == []
