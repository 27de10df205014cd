"""The recurrent quality targets (seq2seq_lab/report/quality.py, issue 18): the search chooses
on validation BLEU only, a target is met only by the chosen recipe's mean test BLEU over all
three seeds, and every candidate of conf/recipe/rnn/ composes into the 30-minute protocol and
builds its network."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import CONF_DIR, compose_config
from omegaconf import OmegaConf
from report_support import write_run

from seq2seq_lab.config import build_network
from seq2seq_lab.report import quality
from seq2seq_lab.report.runs import find_runs

CANDIDATES = sorted(p.stem for p in (Path(CONF_DIR) / "recipe" / "rnn").glob("*.yaml"))


XEON = ("Intel(R) Xeon(R) Processor", ["AMX-BF16", "AVX512-BF16", "AVX512", "AVX2"])
EPYC = ("AMD EPYC", ["AVX512-BF16", "AVX512", "AVX2"])


def run(
    root: Path,
    name: str,
    seed: int,
    val: float,
    test: float,
    status: str = "completed",
    cpu: tuple[str, list[str]] = XEON,
    validations: list[list[float]] | None = None,
):
    family = name.split("_")[0]
    write_run(
        root / f"{name}-{seed}",
        experiment=quality.EXPERIMENT,
        variant=name,
        family=family,
        seed=seed,
        status=status,
        bleu=test,
        best_val_bleu=val,
        cpu=cpu,
        validations=validations,
    )


def runs_of(root: Path):
    return find_runs(root)[0]


def test_the_choice_reads_validation_never_test(tmp_path):
    # bahdanau_b has the better test score, bahdanau_a the better validation score: a is chosen
    run(tmp_path, "bahdanau_a", 1, val=30.0, test=33.0)
    run(tmp_path, "bahdanau_b", 1, val=29.0, test=37.0)
    # only seed 1 and finished runs are the search: a seed-2 or interrupted run never chooses
    run(tmp_path, "bahdanau_c", 2, val=99.0, test=99.0)
    run(tmp_path, "bahdanau_d", 1, val=99.0, test=99.0, status="interrupted")
    run(tmp_path, "plain_x", 1, val=10.0, test=12.0)
    assert quality.select(runs_of(tmp_path)) == {"bahdanau": "bahdanau_a", "plain": "plain_x"}


@pytest.mark.parametrize(
    ("tests", "verdict"),
    [
        ((36.5, 35.8, 36.1), "**met**"),  # mean 36.13 >= 36
        ((36.5, 35.0, 36.1), "**missed**"),  # mean 35.87 < 36
        ((37.0, 38.0), "not yet (2 of 3 seeds)"),  # above the target, but two seeds only
    ],
)
def test_a_target_is_met_by_the_mean_over_all_three_seeds(tmp_path, tests, verdict):
    for seed, test in enumerate(tests, start=1):
        run(tmp_path, "bahdanau_a", seed, val=30.0 + seed, test=test)
    run(tmp_path, "bahdanau_b", 1, val=20.0, test=50.0)  # not chosen: its test never counts
    [row] = quality.quality_rows(runs_of(tmp_path), {"bahdanau": "bahdanau_a"})
    assert row[-1] == verdict
    assert row[2].startswith(f"{sum(tests) / len(tests):.2f}")


def test_each_row_says_how_much_validation_still_rose_at_the_budgets_end(tmp_path):
    # late gain = best BLEU - best BLEU up to 3/4 of the last validated update (1,500 of 2,000)
    rising = [[500, 4.0], [1000, 9.0], [1500, 11.0], [2000, 13.5]]  # +2.5: still improving
    flat = [[500, 20.0], [1000, 30.0], [1500, 33.0], [2000, 33.2]]  # +0.2: stopped
    run(tmp_path, "plain_a", 1, val=13.5, test=14.0, validations=rising)
    run(
        tmp_path,
        "plain_a",
        2,
        val=13.5,
        test=14.0,
        validations=[[v[0], v[1] - 0.5] for v in rising],
    )
    run(tmp_path, "bahdanau_a", 1, val=33.2, test=35.0, validations=flat)
    runs = runs_of(tmp_path)
    chosen = quality.select(runs)
    rows = {row[0]: row for row in quality.quality_rows(runs, chosen)}
    assert rows["plain LSTM seq2seq"][6] == "2.50 ± 0.00"
    assert rows["Bahdanau"][6] == "0.20"
    search = {row[1]: row for row in quality._search_rows(runs, chosen)}
    assert search["`plain_a`"][6] == "+2.50"
    assert "still improving when its budget ended" in quality.quality_markdown(runs)


def test_the_report_names_the_choice_and_leaves_other_experiments_out(tmp_path):
    run(tmp_path / "search", "luong_a", 1, val=31.0, test=34.2)
    run(tmp_path / "search", "luong_b", 1, val=28.0, test=30.0)
    for seed, test in ((2, 34.4), (3, 33.9)):
        run(tmp_path / "confirm", "luong_a", seed, val=31.0, test=test)
    write_run(tmp_path / "other", experiment="e1_attention", variant="luong", family="luong")
    assert quality.main([str(tmp_path / "search"), "--select"]) == 0
    assert quality.main([str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / quality.REPORT).read_text()
    assert "| Luong | `recipe/rnn=luong_a` | 34.17 ± 0.25 |" in report
    assert "**met**" in report
    assert "**chosen**" in report and "`luong_b`" in report
    assert "- **Runs:** 4 (4 finished)" in report  # the E1 run is not one of the search's


def test_the_report_says_the_choice_is_provisional_until_every_candidate_finished(tmp_path):
    for name in CANDIDATES[:-1]:
        run(tmp_path, name, 1, val=20.0, test=20.0)
    run(tmp_path, CANDIDATES[-1], 1, val=20.0, test=20.0, status="interrupted")
    assert quality.searched(runs_of(tmp_path)) == (
        f"{len(CANDIDATES) - 1} of {len(CANDIDATES)} candidates finished; not finished yet, so "
        f"the choice is provisional: {CANDIDATES[-1]}"
    )
    run(tmp_path, CANDIDATES[-1], 1, val=20.0, test=20.0, status="completed")  # its next pass
    assert quality.searched(runs_of(tmp_path)) == (
        f"{len(CANDIDATES)} of {len(CANDIDATES)} candidates finished"
    )


def test_a_machine_of_another_cpu_is_refused_before_it_adds_a_run(tmp_path, capsys, monkeypatch):
    """30 minutes are as many updates as the CPU makes: a pass on another CPU would compare
    candidates on unequal budgets (experiments/run_quality.sh stops on exit 2)."""
    run(tmp_path / "search", "luong_a", 1, val=31.0, test=34.2, cpu=XEON)
    run(tmp_path / "search", "luong_b", 1, val=30.0, test=34.0, cpu=EPYC, status="interrupted")
    here = {"cpu": XEON[0], "cpu_features": XEON[1], "cpu_count": 2}
    monkeypatch.setattr(quality.environment, "hardware", lambda: here)
    assert quality.main([str(tmp_path), "--check-cpu"]) == 0  # an unfinished run counts nowhere
    assert quality.main([str(tmp_path / "nothing-yet"), "--check-cpu"]) == 0
    here.update(cpu=EPYC[0], cpu_features=EPYC[1])
    assert quality.main([str(tmp_path), "--check-cpu"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: {tmp_path}: the finished runs trained on Intel(R) Xeon(R)")
    assert "this machine is AMD EPYC (AVX512-BF16, AVX512, AVX2)" in line


def test_the_report_names_each_runs_cpu(tmp_path):
    run(tmp_path, "plain_a", 1, val=11.0, test=12.0, cpu=XEON)
    run(tmp_path, "plain_a", 2, val=11.0, test=13.0, cpu=EPYC)
    run(tmp_path, "plain_b", 1, val=10.0, test=12.0, cpu=EPYC)
    report = quality.quality_markdown(runs_of(tmp_path))
    [row] = quality.quality_rows(runs_of(tmp_path), {"plain": "plain_a"})
    assert row[7] == (
        "Intel(R) Xeon(R) Processor (AMX-BF16, AVX512-BF16, AVX512, AVX2); "
        "AMD EPYC (AVX512-BF16, AVX512, AVX2)"
    )
    assert "| `plain_b` | completed | 100 | 1.0 | 10.00 | — | AMD EPYC (AVX512-BF16" in report


def test_select_prints_one_candidate_per_family(tmp_path, capsys):
    run(tmp_path, "luong_a", 1, val=31.0, test=34.2)
    run(tmp_path, "plain_b", 1, val=11.0, test=12.0)
    assert quality.main([str(tmp_path), "--select"]) == 0
    assert capsys.readouterr().out.split() == ["luong_a", "plain_b"]


def test_every_family_with_a_target_has_candidates():
    assert {name.split("_")[0] for name in CANDIDATES} == set(quality.TARGETS)


def _leaves(tree: dict, prefix: str):
    """(dotted key, value) of every leaf of a nested dict: model.attention.scaled, True."""
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _leaves(value, f"{prefix}.{key}")
        else:
            yield f"{prefix}.{key}", value


@pytest.mark.parametrize("name", CANDIDATES)
def test_every_candidate_composes_into_the_30_minute_protocol_and_builds(name, tmp_path):
    cfg = compose_config("train", ["recipe=rnn_multi30k_cpu", f"recipe/rnn={name}"], tmp_path)
    family = name.split("_")[0]
    assert cfg.experiment_name == quality.EXPERIMENT and cfg.variant == name
    assert cfg.model._target_.split(".")[-1].lower().startswith(family)
    assert cfg.trainer.max_steps == -1 and cfg.trainer.max_time.minutes == 30
    assert cfg.data.source.name == "multi30k" and cfg.trainer.precision == "32-true"
    # what the candidate writes is what the run gets (no group composed later overrides it)
    written = OmegaConf.load(Path(CONF_DIR) / "recipe" / "rnn" / f"{name}.yaml")
    for key in ("model", "optim", "data"):
        for path, value in _leaves(OmegaConf.to_container(written).get(key) or {}, key):
            assert OmegaConf.select(cfg, path) == value, path
    options = OmegaConf.to_container(cfg.model, resolve=True)
    options.pop("_target_")
    network = build_network(family, src_vocab_size=40, tgt_vocab_size=30, **options)
    src = torch.randint(3, 40, (2, 7))
    tgt = torch.randint(3, 30, (2, 5))
    out = network.teacher_forced(src, src != 0, tgt)
    assert out.logits.shape == (2, 5, 30)
