"""The verdict rule shared by every experiment on synthetic results: one case per outcome
(reproduced / partly / not reproduced / inconclusive), the evidence gates (seeds, floor,
missing settings, wall clock). Each experiment's own checks are shown to hold, fail and be
undecided in experiments/<name>/test_<name>.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_support import transformer_diagnostics, write_run

from experiments.e4_norm_warmup.spec import has_warmup
from seq2seq_lab.report.runs import Run, find_runs
from seq2seq_lab.report.spec import (
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    Check,
    Comparison,
    ExperimentSpec,
    Finding,
    QualityFloor,
)
from seq2seq_lab.report.specs import own_specs

SPECS = own_specs()

# Every row is written as three seeds whose BLEU spreads by ±JITTER around the row's value,
# shifted by OFFSET so that the rule tests sit above every experiment's `synthetic` floor.
SEEDS = (1, 2, 3)
JITTER = {1: -0.2, 2: 0.0, 3: 0.2}
OFFSET = 20.0
INCONCLUSIVE_SEEDS = "inconclusive (1 seed)"
NOT_TRAINED = "inconclusive (not trained enough)"


def write_rows(tmp_path: Path, experiment: str, rows: list[dict], offset: float = OFFSET) -> None:
    for i, row in enumerate(rows):
        row = dict(row)
        seeds = row.pop("seeds", SEEDS)
        for seed in seeds:
            shifted = dict(row)
            for key in ("bleu", "long_bleu"):
                if shifted.get(key) is not None:
                    shifted[key] = shifted[key] + offset + JITTER.get(seed, 0.0)
            write_run(tmp_path / f"{i}_{seed}", experiment=experiment, seed=seed, **shifted)


def outcome_of(tmp_path: Path, experiment: str, grid: list[list[str]] | None = None):
    runs, _ = find_runs(tmp_path)
    spec = SPECS[experiment]
    return spec.verdict(Comparison(spec, runs, grid=grid))


def verdict(tmp_path: Path, experiment: str, rows: list[dict], offset: float = OFFSET) -> str:
    """Write the rows (three seeds each unless a row says otherwise) and return the verdict."""
    write_rows(tmp_path, experiment, rows, offset)
    return outcome_of(tmp_path, experiment).outcome


# ---------------------------------------------------------------------------- E1
def e1(seq2seq=(10.0, 4.0), bahdanau=(20.0, 19.0), luong=(19.0, 18.5), transformer=(25.0, 25.0)):
    rows = []
    for family, scores in [
        ("plain", seq2seq),
        ("bahdanau", bahdanau),
        ("luong", luong),
        ("transformer", transformer),
    ]:
        if scores is not None:
            bleu, long = scores
            rows.append(dict(variant=family, family=family, bleu=bleu, long_bleu=long))
    return rows


def test_e1_failed_runs_count_as_missing_seeds(tmp_path):
    rows = e1(seq2seq=None)
    rows.append(dict(variant="plain", family="plain", status="failed"))
    assert verdict(tmp_path, "e1_attention", rows) == "inconclusive (0 seeds)"


# ---------------------------------------------------------------------------- E4
WARMUP = {
    "schedule._target_": "seq2seq_lab.optim.schedules.InverseSqrt",
    "schedule.warmup_steps": 400,
}
HELD = {**WARMUP, "schedule.linear_warmup": False}  # the peak held: no warmup
CONSTANT = {"schedule._target_": "seq2seq_lab.optim.schedules.Constant"}


def e4(
    post_cold_deep="diverged", post_warm_deep=20.0, post_cold_shallow=10.0, post_grows=True,
    pre_top=0.95,
):  # fmt: skip
    """E4's 8 cells, with Transformer diagnostics: post-LN's FFN gradient norm at init growing
    toward the output (``post_grows``, else falling like pre-LN's) and the similarity of the
    last two blocks after training, post-LN 0.8 and pre-LN ``pre_top``."""
    cells = {
        ("post", False, 3): post_cold_shallow,
        ("post", False, 6): post_cold_deep,
        ("post", True, 3): 19.5,
        ("post", True, 6): post_warm_deep,
        ("pre", False, 3): 20.0,
        ("pre", False, 6): 21.0,
        ("pre", True, 3): 20.0,
        ("pre", True, 6): 20.5,
    }
    rows = []
    for (norm, warmup, layers), bleu in cells.items():
        schedule = WARMUP if warmup else (HELD if norm == "post" else CONSTANT)
        norms, records = transformer_diagnostics(
            layers, post=norm == "post" and post_grows, top=pre_top if norm == "pre" else 0.8
        )
        row = dict(
            variant=f"{norm}-LN_warmup-{warmup}_lr0.001_L{layers}",
            family="transformer",
            grad_norms=norms,
            validation=records,
            config={
                "model.norm": norm,
                "model.encoder_layers": layers,
                "optim.lr": 1e-3,
                **schedule,
            },
        )
        if bleu == "diverged":
            row.update(status="diverged", tested=False)
        else:
            row.update(bleu=bleu)
        rows.append(row)
    return rows


@pytest.mark.parametrize(
    "schedule, expected", [(WARMUP, True), (HELD, False), (CONSTANT, False), ({}, None)]
)
def test_warmup_is_read_from_the_schedule_config(tmp_path, schedule, expected):
    write_run(
        tmp_path, experiment="e4_norm_warmup", variant="v", family="transformer", config=schedule
    )
    run = Run(tmp_path, find_runs(tmp_path)[0][0].results)
    if not schedule:
        run.results["config"].pop("schedule", None)
    assert has_warmup(run) is expected


# ---------------------------------------------------------------------------- E7
def e7(rnn=(5.0, 0.0), gru=(12.0, 10.0), lstm=(12.3, 11.0)):
    rows = []
    for family, offset in (("plain", 0.0), ("bahdanau", 8.0)):
        for cell, (bleu, long) in (("rnn", rnn), ("gru", gru), ("lstm", lstm)):
            rows.append(
                dict(
                    variant=f"{family}_{cell}",
                    family=family,
                    config={"model.cell": cell},
                    bleu=bleu + offset,
                    long_bleu=long + offset,
                )
            )
    return rows


@pytest.mark.parametrize(
    "plain_lstm, bahdanau_lstm, gate",
    [
        (13.0, 26.0, None),  # each family's LSTM above its own multi30k floor (12 and 25)
        (11.0, 30.0, "below the floor of (plain 12, bahdanau 25) BLEU"),
        (16.0, 24.0, "bahdanau_lstm 24.00"),  # the seq2seq floor is no floor for Bahdanau
    ],
)
def test_e7_floor_is_per_family_at_multi30k(tmp_path, plain_lstm, bahdanau_lstm, gate):
    lstm = {"plain": plain_lstm, "bahdanau": bahdanau_lstm}
    for row in e7():
        if row["config"]["model.cell"] == "lstm":
            row["bleu"] = lstm[row["family"]]
        for seed in SEEDS:
            write_run(tmp_path / f"{row['variant']}_{seed}", experiment="e7_cells", seed=seed,
                      scale="multi30k", **row)  # fmt: skip
    result = outcome_of(tmp_path, "e7_cells")
    if gate is None:
        assert not any("floor" in reason for reason in result.gates)
    else:
        assert result.outcome == NOT_TRAINED
        assert any(gate in reason for reason in result.gates)


# ---------------------------------------------------------------------------- the shared rule
def _spec(answers: tuple[bool | None, ...], main: int = 0) -> ExperimentSpec:
    checks = tuple(
        Check(
            f"c{i}",
            lambda c, a=a: Finding(a, "", None if a is not None else "too few seeds: 3"),
            main=i == main,
        )
        for i, a in enumerate(answers)
    )
    floor = QualityFloor({"family": "bahdanau"}, {"synthetic": 10.0}, "Bahdanau")
    return ExperimentSpec(
        "x", "x", "", "", role=lambda r: {"family": r.family}, checks=checks, floor=floor
    )


@pytest.mark.parametrize(
    "answers, outcome",
    [
        ((True, True, True), REPRODUCED),
        ((True, False, None), PARTLY),
        ((False, True, True), NOT_REPRODUCED),
        ((False, None, True), NOT_REPRODUCED),
        ((None, True, True), "inconclusive (too few seeds)"),
    ],
)
def test_outcome_follows_the_main_check(tmp_path, answers, outcome):
    for seed in SEEDS:
        write_run(tmp_path / f"r{seed}", experiment="x", variant="b", family="bahdanau",
                  seed=seed, bleu=20.0 + seed)  # fmt: skip
    runs, _ = find_runs(tmp_path)
    spec = _spec(answers)
    result = spec.verdict(Comparison(spec, runs))
    assert result.outcome == outcome
    if outcome == PARTLY:  # the verdict names the checks that keep it from "reproduced"
        assert result.gates == ("(2) fails", "(3) undecided (too few seeds: 3)")


def _stub_runs(tmp_path: Path, families=("plain", "bahdanau")) -> list[Run]:
    for family in families:
        for seed in SEEDS:
            write_run(tmp_path / f"{family}_{seed}", experiment="x", variant=family,
                      family=family, seed=seed, bleu=20.0 + seed,
                      overrides=[f"model={family}", f"seed={seed}"])  # fmt: skip
    return find_runs(tmp_path)[0]


def test_a_setting_of_the_grid_without_runs_is_inconclusive(tmp_path):
    runs, spec = _stub_runs(tmp_path), _spec((True,))
    grid = [["model=plain"], ["model=bahdanau"], ["model=luong"]]
    result = spec.verdict(Comparison(spec, runs, grid=grid))
    assert result.outcome == "inconclusive (missing settings)"
    assert "model=luong" in " ".join(result.gates)
    grid = grid[:2]
    assert spec.verdict(Comparison(spec, runs, grid=grid)).outcome == REPRODUCED


def test_a_run_stopped_by_the_wall_clock_makes_the_verdict_inconclusive(tmp_path):
    """Stopped by wall clock, slower variants get fewer updates: the old confound."""
    runs, spec = _stub_runs(tmp_path), _spec((True,))
    assert spec.verdict(Comparison(spec, runs)).outcome == REPRODUCED
    clocked = next(r for r in runs if r.family == "plain")
    clocked.results["training"]["stopped_by"] = "trainer.max_time"
    result = spec.verdict(Comparison(spec, runs))
    assert result.outcome == "inconclusive (stopped by the wall clock)"
    assert f"plain seed {clocked.seed}" in result.gates[0]


def test_a_spec_names_exactly_one_main_check():
    floor = QualityFloor({}, {"synthetic": 1.0}, "any")
    checks = (Check("a", lambda c: Finding(True, "")), Check("b", lambda c: Finding(True, "")))
    with pytest.raises(ValueError, match="0 main checks"):
        ExperimentSpec("x", "x", "", "", role=lambda r: {}, checks=checks, floor=floor)


def test_rule_text_names_every_check_the_main_one_and_the_gates():
    text = SPECS["e1_attention"].rule_text()
    for i, check in enumerate(SPECS["e1_attention"].checks, 1):
        assert f"({i}) {check.label}" in text
    assert "partly if (1) holds and another does not" in text
    assert "undecided while one of them has not converged" in text
    assert "[learning speed]" in text and "the verdict says 'at equal updates'" in text
    assert "at least 3 finished seeds" in text and "30 at `synthetic`" in text


# ---------------------------------------------------------------------------- issue 15's defects
def test_a_one_seed_grid_is_inconclusive(tmp_path):
    """A grid that would reproduce with three seeds says nothing with one."""
    rows = [dict(row, seeds=(1,)) for row in e1()]
    assert verdict(tmp_path, "e1_attention", rows) == INCONCLUSIVE_SEEDS


def test_two_near_zero_scores_are_inconclusive(tmp_path):
    """E4's old rule held at post-LN 0.00 vs pre-LN 0.79 (`post < 0.5 * pre`)."""
    rows = e4(post_cold_deep=0.0)
    for row in rows:
        if row.get("bleu") is not None:
            row["bleu"] = 0.79 if row["config"]["model.norm"] == "pre" else 0.0
    assert verdict(tmp_path, "e4_norm_warmup", rows, offset=0.0) == NOT_TRAINED


def test_every_documented_experiment_has_a_spec_with_checks():
    expected = {
        "e1_attention",
        "e2_reversal",
        "e3_scores",
        "e4_norm_warmup",
        "e5_scaling",
        "e6_positions_heads",
        "e7_cells",
    }
    assert set(SPECS) == expected
    assert all(spec.checks and spec.plots for spec in SPECS.values())
