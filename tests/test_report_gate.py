"""The convergence gate (report/gate.py) seed by seed: a rising seed, a stalled one and one on
a plateau keep a variant from being judged as trained, and a check comparing it holds, fails
or stays undecided accordingly: by the one-sided rule and by its kind (checks.judged)
(synthetic runs, no training)."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_support import converging, corpus, translate, write_run

from seq2seq_lab.report.checks import family_role, judged
from seq2seq_lab.report.gate import PLATEAU_GAP, STALLED_BLEU, unconverged
from seq2seq_lab.report.rules import BETTER, Claim
from seq2seq_lab.report.runs import find_runs
from seq2seq_lab.report.spec import (
    FINAL_QUALITY,
    LEARNING_SPEED,
    Check,
    Comparison,
    ExperimentSpec,
    Finding,
    QualityFloor,
)

SOURCES, REFERENCES = corpus(n=60)
SPEC = ExperimentSpec(
    name="gate_test",
    title="gate test",
    published="",
    expected="",
    role=family_role,
    floor=QualityFloor(reference={"family": "bahdanau"}, bleu={"synthetic": 0.0}, text="x"),
)


def arm(root: Path, family: str, error: float, gains=(0.0, 0.0, 0.0), best=(90.0,) * 3,
        status: str = "completed") -> None:  # fmt: skip
    """Three seeds of one family; seed k's validations rise by gains[k] over the last quarter
    and its best validation BLEU is best[k]."""
    for seed, (gain, top) in enumerate(zip(gains, best), start=1):
        hypotheses = translate(REFERENCES, error + 0.01 * seed, seed=100 * seed + len(family))
        write_run(
            root / f"{family}_{seed}", experiment="gate_test", variant=family, family=family,
            seed=seed, texts=(SOURCES, REFERENCES, hypotheses), bleu_only=True,
            validations=converging(gain), best_val_bleu=top, status=status,
        )  # fmt: skip


def comparison(root: Path) -> Comparison:
    return Comparison(SPEC, find_runs(root)[0])


def test_one_rising_seed_keeps_the_variant_unconverged_though_the_mean_is_below(tmp_path):
    arm(tmp_path, "bahdanau", 0.1, gains=(0.0, 0.0, 1.5))  # mean 0.5: below the threshold
    (variant,) = comparison(tmp_path).variants
    assert variant.late_gain.mean < 1.0
    found = unconverged(variant)
    assert found is not None and found.text() == "bahdanau (seed 3 +1.50)"


def test_a_seed_far_below_its_best_sibling_is_on_a_plateau(tmp_path):
    arm(tmp_path, "luong", 0.1, best=(90.0, 90.0 - PLATEAU_GAP, 90.0 - PLATEAU_GAP + 0.1))
    found = unconverged(comparison(tmp_path).variants[0])
    assert found is not None and found.plateau == ("seed 2 on a plateau at val 85.0 < 90.0",)


def test_a_flat_run_near_zero_bleu_is_stalled_not_converged(tmp_path):
    arm(tmp_path, "transformer", 0.97)  # nearly every word wrong: BLEU under STALLED_BLEU
    variant = comparison(tmp_path).variants[0]
    assert variant.bleu < STALLED_BLEU
    found = unconverged(variant)
    assert found is not None and len(found.stalled) == 3 and "stalled at" in found.text()


def test_a_diverged_run_is_neither_stalled_nor_on_a_plateau(tmp_path):
    arm(tmp_path, "transformer", 0.97, best=(90.0, 10.0, 90.0), status="diverged")
    assert unconverged(comparison(tmp_path).variants[0]) is None


@pytest.mark.parametrize(
    ("baseline", "system", "expected"),
    [
        (dict(error=0.4), dict(error=0.1), True),  # every seed converged: holds
        (dict(error=0.4), dict(error=0.6), False),  # converged, worse: fails
        # the baseline (predicted lower) on a plateau on seed 2: undecided
        (dict(error=0.4, best=(90.0, 80.0, 90.0)), dict(error=0.1), None),
        # the system (predicted higher) still rising: it can only widen the gap, holds
        (dict(error=0.4), dict(error=0.1, gains=(3.0, 0.0, 0.0)), True),
        # ... but while the interval does not hold, it is undecided
        (dict(error=0.4), dict(error=0.6, gains=(3.0, 0.0, 0.0)), None),
    ],
)
def test_a_check_holds_fails_or_waits_on_the_gate(tmp_path, baseline, system, expected):
    arm(tmp_path, "plain", **baseline)
    arm(tmp_path, "transformer", **system)
    c = comparison(tmp_path)
    plain, transformer = c.find(family="plain"), c.find(family="transformer")
    finding = judged(c, "transformer - plain", plain, transformer, BETTER)
    assert finding.holds is expected, finding
    if expected is None:
        assert finding.why.startswith("not converged: ")


def test_an_about_equal_claim_waits_for_either_side(tmp_path):
    arm(tmp_path, "plain", 0.1)
    arm(tmp_path, "transformer", 0.1, gains=(3.0, 0.0, 0.0))
    c = comparison(tmp_path)
    plain, transformer = c.find(family="plain"), c.find(family="transformer")
    found = judged(c, "transformer - plain", plain, transformer, Claim("within", 50.0))
    assert found.holds is None and found.why.startswith("not converged: transformer (seed 1")


@pytest.mark.parametrize(("kind", "expected"), [(LEARNING_SPEED, True), (FINAL_QUALITY, None)])
def test_only_a_learning_speed_check_holds_a_variant_to_its_budget(tmp_path, kind, expected):
    """Plain seq2seq, the side predicted lower, still rises: a learning-speed check that holds
    it to the budget decides; a final-quality check may not exempt it."""
    arm(tmp_path, "plain", 0.4, gains=(3.0, 3.0, 3.0))
    arm(tmp_path, "transformer", 0.1)

    def test(c: Comparison) -> Finding:
        plain, transformer = c.find(family="plain"), c.find(family="transformer")
        return judged(c, "transformer - plain", plain, transformer, BETTER,
                      equal_updates=[plain])  # fmt: skip

    found = Check("transformer better", test, kind=kind).judge(comparison(tmp_path))
    assert found.holds is expected, found
