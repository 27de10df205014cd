"""E5's verdict checks (experiments/e5_scaling/spec.py) on synthetic runs scored with the real
metrics: each check holds where the effect is there, fails where it is not, and is undecided,
with its reason, where a compared variant still improves or the runs are too noisy; the
attention entropy at init is a descriptive table, not a check."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from report_support import corpus, entropy_records, write_arm

from experiments.e5_scaling.spec import (
    ENTROPY_TABLE,
    entropy_rows,
    gap_difference,
)
from experiments.e5_scaling.spec import (
    SPEC as E5,
)
from seq2seq_lab.report.evidence import difference
from seq2seq_lab.report.markdown import tables_section
from seq2seq_lab.report.runs import find_runs
from seq2seq_lab.report.spec import Comparison

MAIN, GROWS = E5.checks
GOOD, BAD = 0.1, 0.5  # word error rates: a model that trained, one that did not

# name -> (test sentences, seeds, {(scaled, heads): write_arm kwargs}); d_model 256, so
# heads 16 is d_k 16 and one head d_k 256
SCENARIOS = {
    # the unscaled model fails to train at d_k 256 only
    "present": (80, (1, 2, 3), {(True, 16): {}, (False, 16): {}, (True, 1): {}, (False, 1): {"error": BAD}}),
    # the unscaled model is as good at d_k 256, and worse at d_k 16: the gap shrinks
    "absent": (200, (1, 2, 3, 4, 5, 6), {(True, 16): {"spread": 0.0}, (False, 16): {"error": BAD}, (True, 1): {"spread": 0.0}, (False, 1): {"spread": 0.0}}),
    # as present, the scaled models still rising
    "scaled rising": (80, (1, 2, 3), {(True, 16): {"gain": 5.0}, (False, 16): {}, (True, 1): {"gain": 5.0}, (False, 1): {"error": BAD}}),
    # as present, the unscaled models still rising: exempt (compared at equal updates)
    "unscaled rising": (80, (1, 2, 3), {(True, 16): {}, (False, 16): {"gain": 5.0}, (True, 1): {}, (False, 1): {"error": BAD, "gain": 5.0}}),
    # a small effect on 30 test sentences, the unscaled model at d_k 256 far apart by seed
    "noisy": (30, (1, 2, 3), {(True, 16): {"error": 0.2}, (False, 16): {"error": 0.2}, (True, 1): {"error": 0.2}, (False, 1): {"error": 0.26, "spread": 0.1}}),
}  # fmt: skip
ENTROPY = {(True, 16): 2.0, (False, 16): 1.5, (True, 1): 2.0, (False, 1): 0.4}


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    built: dict[str, Comparison] = {}

    def build(name: str) -> Comparison:
        if name not in built:
            n, seeds, arms = SCENARIOS[name]
            root, texts = tmp_path_factory.mktemp(name.replace(" ", "_")), corpus(n=n)
            for (scale, heads), kwargs in arms.items():
                write_arm(
                    root,
                    experiment="e5_scaling",
                    label=f"scale-{scale}_heads{heads}",
                    family="transformer",
                    texts=texts,
                    config={
                        "model.attention.scale": scale,
                        "model.d_model": 256,
                        "model.heads": heads,
                    },
                    seeds=seeds,
                    validation=entropy_records(ENTROPY[scale, heads]),
                    **{"error": GOOD, **kwargs},
                )
            built[name] = Comparison(E5, find_runs(root)[0])
        return built[name]

    return build


@pytest.mark.parametrize("check", [MAIN, GROWS], ids=["main", "gap grows"])
@pytest.mark.parametrize(
    "scenario, holds", [("present", True), ("absent", False), ("unscaled rising", True)]
)
def test_e5_checks_decide(comparison, check, scenario, holds):
    found = check.judge(comparison(scenario))
    assert found.holds is holds, found.detail
    assert found.why is None


def test_the_scaled_model_still_rising_cannot_undo_the_main_check(comparison):
    """The one-sided rule: the scaled model is the side the main check predicts higher."""
    found = MAIN.judge(comparison("scaled rising"))
    assert (
        found.holds is True and "holds though the side predicted higher still rises" in found.detail
    )


@pytest.mark.parametrize("check", [GROWS], ids=["gap grows"])
def test_e5_checks_wait_for_the_scaled_model_to_converge(comparison, check):
    found = check.judge(comparison("scaled rising"))
    assert found.holds is None
    assert found.why.startswith("not converged: ")
    assert "scale-True_heads1 (seed 1 +5.00" in found.why and "scale-False" not in found.why


@pytest.mark.parametrize("check", [MAIN, GROWS], ids=["main", "gap grows"])
def test_e5_checks_are_undecided_on_noisy_runs(comparison, check):
    found = check.judge(comparison("noisy"))
    assert found.holds is None
    assert found.why.startswith(("too few seeds", "test set too small")), found.why


def test_e5_check_texts_state_the_rule_the_head_count_and_equal_updates():
    assert "95 % interval's lower end >= 2" in MAIN.text and MAIN.main
    assert "head count" in MAIN.text and "head count" in GROWS.text
    assert all("equal updates" in check.text for check in E5.checks)
    assert not any("entropy" in check.text for check in E5.checks)


def test_e5_gap_difference_sums_the_two_gaps_variances(comparison):
    c = comparison("present")
    small = difference(c.find(scale=False, d_k=16), c.find(scale=True, d_k=16))
    large = difference(c.find(scale=False, d_k=256), c.find(scale=True, d_k=256))
    d = gap_difference(large, small, 256, 16)
    assert d.delta == pytest.approx(large.delta - small.delta)
    assert d.seed_var == pytest.approx(large.seed_var + small.seed_var)
    assert d.test_var == pytest.approx(large.test_var + small.test_var)
    assert d.se**2 == pytest.approx(large.se**2 + small.se**2)
    assert d.seeds == 3 and d.paired
    # never narrower than either gap's own interval
    assert d.half_width() >= max(large.half_width(), small.half_width())


def test_e5_entropy_at_init_is_a_table_not_a_check(comparison):
    c = comparison("present")
    assert ENTROPY_TABLE in E5.tables
    header, rows = entropy_rows(c)
    assert header == ["d_k", "heads", "scaled (nats)", "unscaled (nats)"]
    assert rows == [
        ["16", "16", "2.000 ± 0.000", "1.500 ± 0.000"],
        ["256", "1", "2.000 ± 0.000", "0.400 ± 0.000"],
    ]
    text = "\n".join(tables_section(SimpleNamespace(spec=E5, comparison=c)))
    assert "## Attention entropy at initialisation" in text
    assert "| 256 | 1 | 2.000 ± 0.000 | 0.400 ± 0.000 |" in text
    assert "not a check" in text


def test_e5_entropy_table_without_init_records(tmp_path):
    texts = corpus(n=20)
    for scale in (True, False):
        write_arm(tmp_path, experiment="e5_scaling", label=f"scale-{scale}", family="transformer",
                  error=GOOD, texts=texts, seeds=(1,),
                  config={"model.attention.scale": scale, "model.d_model": 256, "model.heads": 4})  # fmt: skip
    c = Comparison(E5, find_runs(tmp_path)[0])
    assert entropy_rows(c) == ([], [])
    assert "_Not shown" in "\n".join(tables_section(SimpleNamespace(spec=E5, comparison=c)))
