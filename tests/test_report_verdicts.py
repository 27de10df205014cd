"""The verdict rule of every experiment on synthetic results: one case per outcome
(reproduced / partly / not reproduced) and one without enough runs; plus the shared rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_support import entropy_records, write_run

from seq2seq_lab.report.experiments import SPECS
from seq2seq_lab.report.experiments.e4_norm_warmup import has_warmup
from seq2seq_lab.report.runs import Run, find_runs
from seq2seq_lab.report.spec import (
    NOT_ENOUGH,
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    Check,
    Comparison,
    ExperimentSpec,
    Finding,
    decide,
)


def verdict(tmp_path: Path, experiment: str, rows: list[dict]) -> str:
    """Write one run per row (two seeds when the row says so) and return the verdict."""
    for i, row in enumerate(rows):
        row = dict(row)
        seeds = row.pop("seeds", (1,))
        for seed in seeds:
            write_run(tmp_path / f"{i}_{seed}", experiment=experiment, seed=seed, **row)
    runs, _ = find_runs(tmp_path)
    return SPECS[experiment].verdict(Comparison(SPECS[experiment], runs)).outcome


# ---------------------------------------------------------------------------- E1
def e1(seq2seq=(10.0, 4.0), bahdanau=(20.0, 19.0), luong=(19.0, 18.5), transformer=(25.0, 25.0)):
    rows = []
    for family, scores in [
        ("seq2seq", seq2seq),
        ("bahdanau", bahdanau),
        ("luong", luong),
        ("transformer", transformer),
    ]:
        if scores is not None:
            bleu, long = scores
            rows.append(dict(variant=family, family=family, bleu=bleu, long_bleu=long))
    return rows


@pytest.mark.parametrize(
    "rows, outcome",
    [
        (e1(), REPRODUCED),
        (e1(transformer=(18.0, 18.0)), PARTLY),  # the Transformer is not best
        (e1(seq2seq=(10.0, 10.0), bahdanau=(20.0, 5.0)), PARTLY),  # attention degrades more
        (e1(bahdanau=(11.0, 10.0)), NOT_REPRODUCED),  # Bahdanau only +1
        (e1(seq2seq=None), NOT_ENOUGH),
    ],
)
def test_e1_attention_rule(tmp_path, rows, outcome):
    assert verdict(tmp_path, "e1_attention", rows) == outcome


def test_e1_diverged_transformer_without_test_counts_as_zero_bleu(tmp_path):
    rows = e1(transformer=None)
    rows.append(dict(variant="transformer", family="transformer", status="diverged", tested=False))
    # the Transformer is an attention model too: at 0 BLEU it fails check (1)
    assert verdict(tmp_path, "e1_attention", rows) == NOT_REPRODUCED
    runs, _ = find_runs(tmp_path)
    found = SPECS["e1_attention"].verdict(Comparison(SPECS["e1_attention"], runs)).findings
    assert "transformer 0.00" in found[0][1].detail


def test_e1_failed_runs_are_left_out(tmp_path):
    rows = e1(seq2seq=None)
    rows.append(dict(variant="seq2seq", family="seq2seq", status="failed"))
    assert verdict(tmp_path, "e1_attention", rows) == NOT_ENOUGH


# ---------------------------------------------------------------------------- E2
def e2(fwd=(10.0, 4.0), rev=(13.0, 9.0), att_fwd=20.0, att_rev=20.5):
    rows = []
    for family, reverse, scores in [
        ("seq2seq", False, fwd),
        ("seq2seq", True, rev),
        ("bahdanau", False, (att_fwd, att_fwd)),
        ("bahdanau", True, (att_rev, att_rev)),
    ]:
        rows.append(
            dict(
                variant=f"{family}_reverse-{reverse}",
                family=family,
                config={"model.reverse_source": reverse},
                bleu=scores[0],
                long_bleu=scores[1],
            )
        )
    return rows


@pytest.mark.parametrize(
    "rows, outcome",
    [
        (e2(), REPRODUCED),
        (e2(rev=(13.0, 5.0)), PARTLY),  # gain smaller on long sentences
        (e2(att_rev=23.0), PARTLY),  # attention model changes by 3
        (e2(rev=(10.2, 4.0)), NOT_REPRODUCED),
        (e2()[2:], NOT_ENOUGH),  # no plain seq2seq
    ],
)
def test_e2_reversal_rule(tmp_path, rows, outcome):
    assert verdict(tmp_path, "e2_reversal", rows) == outcome


# ---------------------------------------------------------------------------- E3
def e3(dot=20.0, general=20.5, concat=19.0, location=15.0, no_feeding=19.5, additive=20.1):
    luong = [
        ("dot", True, dot),
        ("general", True, general),
        ("concat", True, concat),
        ("location", True, location),
        ("general", False, no_feeding),
    ]
    rows = [
        dict(
            variant=f"luong_{score}{'' if feeding else '_no_feeding'}",
            family="luong",
            config={
                "model.attention.score": score,
                "model.attention.window": "global",
                "model.input_feeding": feeding,
            },
            bleu=bleu,
        )
        for score, feeding, bleu in luong
    ]
    rows += [
        dict(
            variant=f"bahdanau_{form}",
            family="bahdanau",
            config={"model.attention.form": form},
            bleu=additive + delta,
        )
        for form, delta in (("concat", 0.1), ("separate", 0.0), ("feedforward", -0.3))
    ]
    return rows


@pytest.mark.parametrize(
    "rows, outcome",
    [
        (e3(), REPRODUCED),
        (e3(location=21.0), PARTLY),  # location not worst
        (e3(dot=15.0, location=25.0, no_feeding=21.0), NOT_REPRODUCED),
    ],
)
def test_e3_scores_rule(tmp_path, rows, outcome):
    assert verdict(tmp_path, "e3_scores", rows) == outcome


def test_e3_without_luong_or_bahdanau_is_not_enough(tmp_path):
    rows = [dict(variant="seq2seq", family="seq2seq", bleu=10.0)]
    assert verdict(tmp_path, "e3_scores", rows) == NOT_ENOUGH


# ---------------------------------------------------------------------------- E4
WARMUP = {
    "schedule._target_": "seq2seq_lab.optim.schedules.InverseSqrt",
    "schedule.warmup_steps": 400,
}
HELD = {**WARMUP, "schedule.linear_warmup": False}  # the peak held: no warmup
CONSTANT = {"schedule._target_": "seq2seq_lab.optim.schedules.Constant"}


def e4(post_cold_deep="diverged", post_warm_deep=20.0, post_cold_shallow=10.0):
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
        row = dict(
            variant=f"{norm}-LN_warmup-{warmup}_lr0.001_L{layers}",
            family="transformer",
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
    "rows, outcome",
    [
        (e4(), REPRODUCED),
        (e4(post_warm_deep=15.0), PARTLY),  # with warmup post-LN is 5.5 below pre-LN
        (e4(post_cold_deep=19.0), NOT_REPRODUCED),  # post-LN trains fine without warmup
        (e4()[4:], NOT_ENOUGH),  # pre-LN only
    ],
)
def test_e4_norm_warmup_rule(tmp_path, rows, outcome):
    assert verdict(tmp_path, "e4_norm_warmup", rows) == outcome


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


# ---------------------------------------------------------------------------- E5
def e5(
    scaled_entropy=2.0,
    unscaled_entropy=(1.5, 1.0, 0.4),
    unscaled_bleu=(19.5, 18.0, 12.0),
    validated=None,
    init=True,
):
    """The E5 grid at d_model 256: heads 16/4/1 (d_k 16/64/256) x scaled/unscaled, with
    ``validated`` the entropy of every record after the first validation (default: as at
    init) and, without ``init``, no record at initialisation."""
    rows = []
    for i, heads in enumerate((16, 4, 1)):
        for scale in (True, False):
            entropy = scaled_entropy if scale else unscaled_entropy[i]
            records = entropy_records(entropy, validated)
            rows.append(
                dict(
                    variant=f"scale-{scale}_heads{heads}_dk{256 // heads}",
                    family="transformer",
                    config={
                        "model.attention.scale": scale,
                        "model.d_model": 256,
                        "model.heads": heads,
                    },
                    bleu=20.0 if scale else unscaled_bleu[i],
                    validation=records if init else records[1:],
                )
            )
    return rows


@pytest.mark.parametrize(
    "rows, outcome",
    [
        (e5(), REPRODUCED),
        (e5(unscaled_entropy=(2.5, 2.5, 2.5)), PARTLY),  # entropy not lower: BLEU checks hold
        (e5(unscaled_entropy=(2.5, 2.5, 2.5), unscaled_bleu=(21.0, 22.0, 23.0)), NOT_REPRODUCED),
        ([r for r in e5() if r["config"]["model.attention.scale"]], NOT_ENOUGH),
    ],
)
def test_e5_scaling_rule(tmp_path, rows, outcome):
    assert verdict(tmp_path, "e5_scaling", rows) == outcome


def e5_entropy_findings(tmp_path: Path, rows: list[dict]) -> list:
    """The findings of E5's two entropy checks on the rows' runs."""
    for i, row in enumerate(rows):
        write_run(tmp_path / str(i), experiment="e5_scaling", seed=1, **row)
    runs, _ = find_runs(tmp_path)
    spec = SPECS["e5_scaling"]
    findings = spec.verdict(Comparison(spec, runs)).findings
    return [finding for check, finding in findings if "entropy" in check.text]


def test_e5_reads_the_entropy_at_init_not_after_the_first_validation(tmp_path):
    # after the first validation every model has entropy 1.0: only the init records differ
    lower, falls = e5_entropy_findings(tmp_path / "a", e5(validated=1.0))
    assert lower.holds and falls.holds
    assert "d_k 256: scaled 2.000, unscaled 0.400" in lower.detail
    # runs without an init record (written before it existed) have no entropy at init
    lower, falls = e5_entropy_findings(tmp_path / "b", e5(validated=1.0, init=False))
    assert lower.holds is None and falls.holds is None


# ---------------------------------------------------------------------------- E6
def e6(none=10.0, one_head=19.0, learned=19.8):
    variants = [
        ("sinusoidal", "sinusoidal", 4, "relu", 20.0),
        ("learned", "learned", 4, "relu", learned),
        ("relative", "relative", 4, "relu", 20.3),
        ("no_positions", "none", 4, "relu", none),
        ("one_head", "sinusoidal", 1, "relu", one_head),
        ("eight_heads", "sinusoidal", 8, "relu", 20.1),
        ("silu", "sinusoidal", 4, "silu", 20.2),
    ]
    return [
        dict(
            variant=name,
            family="transformer",
            config={"model.positions": pos, "model.heads": heads, "model.ffn_activation": act},
            bleu=bleu,
        )
        for name, pos, heads, act, bleu in variants
    ]


@pytest.mark.parametrize(
    "rows, outcome",
    [
        (e6(), REPRODUCED),
        (e6(one_head=20.5), PARTLY),  # a single head is not worse
        (e6(none=19.5), NOT_REPRODUCED),  # no positions barely hurts
        ([r for r in e6() if r["variant"] != "no_positions"], NOT_ENOUGH),
    ],
)
def test_e6_positions_heads_rule(tmp_path, rows, outcome):
    assert verdict(tmp_path, "e6_positions_heads", rows) == outcome


# ---------------------------------------------------------------------------- E7
def e7(rnn=(5.0, 0.0), gru=(12.0, 10.0), lstm=(12.5, 11.0)):
    rows = []
    for family, offset in (("seq2seq", 0.0), ("bahdanau", 8.0)):
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
    "rows, outcome",
    [
        (e7(), REPRODUCED),
        (e7(lstm=(15.0, 14.0)), PARTLY),  # GRU 3 BLEU below LSTM
        (e7(rnn=(12.0, 0.0)), NOT_REPRODUCED),  # the vanilla RNN is as good as GRU
        ([r for r in e7() if r["config"]["model.cell"] != "rnn"], NOT_ENOUGH),
    ],
)
def test_e7_cells_rule(tmp_path, rows, outcome):
    assert verdict(tmp_path, "e7_cells", rows) == outcome


# ---------------------------------------------------------------------------- the shared rule
def _spec(partly: str, primary: tuple[bool, ...]) -> ExperimentSpec:
    checks = tuple(
        Check(f"c{i}", lambda c: Finding(None, ""), primary=p) for i, p in enumerate(primary)
    )
    return ExperimentSpec("x", "x", "", "", role=lambda r: {}, checks=checks, partly=partly)


@pytest.mark.parametrize(
    "partly, answers, outcome",
    [
        ("primary", (True, True, True), REPRODUCED),
        ("primary", (True, False, None), PARTLY),
        ("primary", (False, True, True), NOT_REPRODUCED),
        ("primary", (None, True, True), NOT_ENOUGH),
        ("any", (True, True, True), REPRODUCED),
        ("any", (False, None, True), PARTLY),
        ("any", (False, False, None), NOT_REPRODUCED),
        ("any", (None, None, None), NOT_ENOUGH),
    ],
)
def test_decide(partly, answers, outcome):
    assert decide(_spec(partly, (True, False, False)), answers) == outcome


def test_rule_text_names_every_check_and_the_partly_condition():
    text = SPECS["e1_attention"].rule_text()
    for i, check in enumerate(SPECS["e1_attention"].checks, 1):
        assert f"({i}) {check.text}" in text
    assert "partly if (1) holds" in text


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
