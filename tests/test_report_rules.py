"""Why a check is undecided (report/rules.py): the reason names what would decide it."""

from __future__ import annotations

import pytest

from seq2seq_lab.report.evidence import Difference
from seq2seq_lab.report.rules import Claim, why_undecided


def made(delta: float, seed_var: float, test_var: float | None, sentences: int = 4000):
    """A paired difference over 5 seeds with the given variance terms."""
    return Difference(
        "a", "b", "test BLEU", (0.0,) * 5, (delta,) * 5, True, delta, seed_var, 4.0,
        test_var, sentences, True,
    )  # fmt: skip


def test_an_estimate_at_the_margin_names_the_test_set_and_the_gap():
    """+0.98 inside ±1: the interval must shrink below 0.02, and the test-sentence term alone
    (sd 0.1) leaves more than that with any number of seeds; the sentences dominate the
    half-width (the seeds' sd 0.03)."""
    claim = Claim("within", 1.0)
    reason = why_undecided(claim, made(0.98, 0.001, 0.01))
    assert reason.startswith("test set too small for the margin: the estimate is 0.02 from it")
    assert "from seeds, ±0.16 from sentences (4000 sentences)" in reason


def test_where_the_seeds_dominate_the_reason_is_the_seeds_not_the_test_set():
    """The same estimate with the seeds' sd 0.55: sentences alone would still not decide it,
    but it is the seeds' spread that makes the interval wide, and the reason says so."""
    reason = why_undecided(Claim("within", 1.0), made(0.98, 0.3, 0.01))
    assert reason.startswith("too few seeds: 5; the observed spread needs more than 50")
    assert reason.endswith("(±1.17 from seeds, ±0.16 from sentences)")


def test_seeds_that_would_decide_are_counted():
    claim = Claim("at least", 0.0)
    reason = why_undecided(claim, made(1.0, 1.0, 0.001))
    assert claim.decide(made(1.0, 1.0, 0.001)) is None
    assert reason.startswith("too few seeds: 5; the observed spread needs about ")
    needed = int(reason.split("needs about ")[1].split()[0])
    assert claim.decide(made(1.0, 1.0, 0.001).with_seeds(needed)) is True
    assert claim.decide(made(1.0, 1.0, 0.001).with_seeds(needed - 1)) is None


def test_missing_outputs_are_named_before_anything_else():
    assert why_undecided(Claim("at least", 0.0), made(1.0, 1.0, None)).startswith(
        "test outputs missing"
    )


@pytest.mark.parametrize(
    ("kind", "margin", "delta", "gap"),
    [("at least", 2.0, 2.5, 0.5), ("at most", -0.5, -0.2, 0.3), ("within", 1.0, -0.7, 0.3),
     ("not below", 0.5, -0.4, 0.1)],
)  # fmt: skip
def test_the_gap_is_the_distance_to_the_edge_the_interval_must_clear(kind, margin, delta, gap):
    assert Claim(kind, margin).gap(made(delta, 1.0, 0.01)) == pytest.approx(gap)
