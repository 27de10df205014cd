"""How a check decides from a difference: holds, fails or undecided, and why undecided.

A check claims something of Δ = system - baseline (``report/evidence.py``) with a margin m,
declared in the experiment's spec before any run, and reads the interval of Δ:

- **at least m** ("better", m = 0; "better by at least m"): holds when the 95 % interval's
  lower end is >= m, fails when its upper end is < m;
- **at most m** ("worse", m = 0; "worse by at least |m|", m < 0): holds when the upper end is
  <= m, fails when the lower end is > m;
- **within ±m** ("about equal"): two one-sided tests at 0.05: holds when the 90 % interval
  lies inside [-m, m], fails when it lies wholly above m or below -m;
- **not below -m** ("not worse by more than m"): one-sided at 0.05: holds when the 90 %
  interval's lower end is >= -m, fails when its upper end is < -m.

Anything else is **undecided**, and :func:`why_undecided` names the reason: the test outputs
were not there (the test-sentence term is not measured); the test set is too small for the
margin (the estimate lies closer to the margin than the interval that test-sentence sampling
alone leaves with any number of seeds, and the sentences dominate the half-width); or too few
seeds, with how many the observed spread needs. Either reason gives both parts of the
half-width, the seeds' and the sentences', so a reader sees which one more data must shrink.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from seq2seq_lab.report.evidence import Difference

MAX_SEEDS = 50  # the most seeds a reason proposes: beyond it, "more than 50"


@dataclass(frozen=True)
class Claim:
    """What a check claims of Δ: ``kind`` one of "at least", "at most", "within", "not below",
    with its margin (in the measure's unit)."""

    kind: str
    margin: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in ("at least", "at most", "within", "not below"):
            raise ValueError(f"unknown claim {self.kind!r}")

    def decide(self, d: Difference) -> bool | None:
        m = self.margin
        if self.kind == "at least":
            low, high = d.interval(0.95)
            return True if low >= m else False if high < m else None
        if self.kind == "at most":
            low, high = d.interval(0.95)
            return True if high <= m else False if low > m else None
        low, high = d.interval(0.90)
        if self.kind == "within":
            return True if -m <= low and high <= m else False if low > m or high < -m else None
        return True if low >= -m else False if high < -m else None  # not below

    def words(self) -> str:
        """The rule as a check's text gives it."""
        m = self.margin
        return {
            "at least": f"95 % interval's lower end >= {m:g}",
            "at most": f"95 % interval's upper end <= {m:g}",
            "within": f"90 % interval inside ±{m:g} (two one-sided tests at 0.05)",
            "not below": f"90 % interval's lower end >= -{m:g} (one-sided test at 0.05)",
        }[self.kind]

    def gap(self, d: Difference) -> float:
        """How far the estimate lies from the edge the interval has to clear: the interval's
        half-width must shrink below it for the check to be decided."""
        m = self.margin
        if self.kind == "within":
            return abs(m - abs(d.delta))
        return abs(d.delta - (-m if self.kind == "not below" else m))

    def interval_text(self, d: Difference) -> str:
        """Δ with the interval this claim reads."""
        if self.kind in ("within", "not below"):
            low, high = d.interval(0.90)
            return f"{d.delta:+.2f} [{low:+.2f}, {high:+.2f}] (90 %)"
        return f"{d.delta:+.2f} [{d.low:+.2f}, {d.high:+.2f}]"


BETTER = Claim("at least", 0.0)
WORSE = Claim("at most", 0.0)


def why_undecided(claim: Claim, d: Difference) -> str:
    """The reason ``claim`` is undecided on ``d`` (module docstring), naming which of the two
    variance terms dominates the interval's half-width, with both figures."""
    if d.sentence_level and d.test_var is None:
        return "test outputs missing: the test-sentence sampling term is not measured"
    level = 0.90 if claim.kind in ("within", "not below") else 0.95
    seeds, sentences = d.half_widths(level)
    parts = f"±{seeds:.2f} from seeds, ±{sentences:.2f} from sentences"
    if claim.decide(d.with_seeds(math.inf)) is None and sentences >= seeds:
        return (
            f"test set too small for the margin: the estimate is {claim.gap(d):.2f} from it; "
            f"half-width {parts} ({d.sentences} sentences), and with any number of seeds "
            f"test-sentence sampling alone leaves ±{sentences:.2f}"
        )
    for n in range(d.seeds + 1, MAX_SEEDS + 1):
        if claim.decide(d.with_seeds(n)) is not None:
            return f"too few seeds: {d.seeds}; the observed spread needs about {n} ({parts})"
    return (
        f"too few seeds: {d.seeds}; the observed spread needs more than {MAX_SEEDS}, the "
        f"estimate {claim.gap(d):.2f} from the margin ({parts})"
    )
