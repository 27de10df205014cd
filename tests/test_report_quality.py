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


def run(root: Path, name: str, seed: int, val: float, test: float, status: str = "completed"):
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
    run(tmp_path, "seq2seq_x", 1, val=10.0, test=12.0)
    assert quality.select(runs_of(tmp_path)) == {"bahdanau": "bahdanau_a", "seq2seq": "seq2seq_x"}


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


def test_select_prints_one_candidate_per_family(tmp_path, capsys):
    run(tmp_path, "luong_a", 1, val=31.0, test=34.2)
    run(tmp_path, "seq2seq_b", 1, val=11.0, test=12.0)
    assert quality.main([str(tmp_path), "--select"]) == 0
    assert capsys.readouterr().out.split() == ["luong_a", "seq2seq_b"]


def test_every_family_with_a_target_has_candidates():
    assert {name.split("_")[0] for name in CANDIDATES} == set(quality.TARGETS)


@pytest.mark.parametrize("name", CANDIDATES)
def test_every_candidate_composes_into_the_30_minute_protocol_and_builds(name, tmp_path):
    cfg = compose_config("train", ["recipe=rnn_multi30k_cpu", f"recipe/rnn={name}"], tmp_path)
    family = name.split("_")[0]
    assert cfg.experiment_name == quality.EXPERIMENT and cfg.variant == name
    assert (
        cfg.model._target_.split(".")[-1]
        .lower()
        .startswith({"seq2seq": "plainseq2seq"}.get(family, family))
    )
    assert cfg.trainer.max_steps == -1 and cfg.trainer.max_time.minutes == 30
    assert cfg.data.source.name == "multi30k" and cfg.trainer.precision == "32-true"
    # what the candidate writes is what the run gets (no group composed later overrides it)
    written = OmegaConf.load(Path(CONF_DIR) / "recipe" / "rnn" / f"{name}.yaml")
    for key in ("model", "optim", "data"):
        for sub, value in (written.get(key) or {}).items():
            assert cfg[key][sub] == value, f"{key}.{sub}"
    options = OmegaConf.to_container(cfg.model, resolve=True)
    options.pop("_target_")
    network = build_network(family, src_vocab_size=40, tgt_vocab_size=30, **options)
    src = torch.randint(3, 40, (2, 7))
    tgt = torch.randint(3, 30, (2, 5))
    out = network.teacher_forced(src, src != 0, tgt)
    assert out.logits.shape == (2, 5, 30)
