"""What a report section needs to know about one comparison, and how a verdict is reached.

An :class:`ExperimentSpec` is data plus small functions: how a run's role is read from its
config (never from the variant string, which is only a label), which pairs are tested for
significance, which plots carry the finding, and the checks of the verdict rule. The rule is
the same for every experiment and is printed in each report next to the numbers it used:

- every check answers holds / fails / lacks data, with the numbers it looked at;
- **reproduced** if every check holds;
- **partly** if every primary check holds (``partly="primary"``), or if at least one check
  holds (``partly="any"``);
- **not reproduced** otherwise;
- **not enough runs** if a primary check lacks data (``"primary"``), or every check does
  (``"any"``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from seq2seq_lab.report.aggregate import Role, Variant, group_variants
from seq2seq_lab.report.runs import Run

REPRODUCED = "reproduced"
PARTLY = "partly"
NOT_REPRODUCED = "not reproduced"
NOT_ENOUGH = "not enough runs"
NO_RULE = "no rule"


@dataclass(frozen=True)
class Finding:
    """The answer of one check: ``holds`` is None when the runs lack the data."""

    holds: bool | None
    detail: str


@dataclass(frozen=True)
class Check:
    """One claim of a published finding, tested on the aggregated runs."""

    text: str  # the claim with its threshold, as printed in the report
    test: Callable[[Comparison], Finding]
    primary: bool = True

    @property
    def label(self) -> str:
        """The claim as the report and the README list it."""
        return self.text + ("" if self.primary else " (secondary)")


@dataclass(frozen=True)
class Verdict:
    outcome: str
    rule: str
    findings: tuple[tuple[Check, Finding], ...]


class Plot(Protocol):
    """A figure that carries a finding (see ``seq2seq_lab.report.plots``)."""

    name: str
    caption: str

    def draw(self, comparison: Comparison, out_dir: Path) -> list[Path]:
        """Write PNG(s) under ``out_dir`` and return them; [] when the runs lack the data."""
        ...


@dataclass(frozen=True)
class ExperimentSpec:
    """The one home of a comparison's finding: the report prints ``published``, ``expected``
    and the checks beside the runs' numbers, and ``seq2seq_lab.report.readmes`` renders the
    same text into the comparison's README."""

    name: str  # the experiment_name runs record, e.g. "e1_attention"
    title: str
    published: str  # what the papers found (comparisons.md)
    expected: str  # what a faithful small-scale reproduction should show
    role: Callable[[Run], Role]
    checks: tuple[Check, ...] = ()
    partly: Literal["primary", "any"] = "primary"
    contrasts: Callable[[Comparison], list[tuple[Variant, Variant]]] = lambda c: []
    plots: tuple[Plot, ...] = ()
    order: Callable[[Role], Any] | None = None  # table row order (default: by label)

    def rule_text(self) -> str:
        """The verdict rule in words, numbered like the checks."""
        if not self.checks:
            return "No verdict rule is defined for this comparison."
        numbered = "; ".join(f"({i}) {c.text}" for i, c in enumerate(self.checks, 1))
        return f"Checks: {numbered}. {self.outcome_rule()}"

    def outcome_rule(self) -> str:
        """How the checks' answers (numbered from 1) make the verdict, in words."""
        primary = [str(i) for i, c in enumerate(self.checks, 1) if c.primary]
        if self.partly == "primary":
            one = len(primary) == 1
            partly = f"partly if ({', '.join(primary)}) hold{'s' if one else ''}"
            lacking = f"not enough runs if ({', '.join(primary)}) lack{'s' if one else ''} data"
        else:
            partly = "partly if at least one holds"
            lacking = "not enough runs if all lack data"
        return (
            f"Reproduced if every check holds; {partly}; not reproduced otherwise; {lacking}. "
            "BLEU is the mean over seeds; a diverged run without a test score counts as 0 BLEU, "
            "a failed run is left out."
        )

    def verdict(self, comparison: Comparison) -> Verdict:
        findings = tuple((check, check.test(comparison)) for check in self.checks)
        return Verdict(decide(self, [f.holds for _, f in findings]), self.rule_text(), findings)


def decide(spec: ExperimentSpec, answers: Sequence[bool | None]) -> str:
    """Apply the rule of the module docstring to the checks' answers (in spec order)."""
    if not spec.checks:
        return NO_RULE
    primary = [a for c, a in zip(spec.checks, answers) if c.primary]
    if spec.partly == "primary":
        if any(a is None for a in primary):
            return NOT_ENOUGH
        partly = all(primary)
    else:
        if all(a is None for a in answers):
            return NOT_ENOUGH
        partly = any(a is True for a in answers)
    if all(a is True for a in answers):
        return REPRODUCED
    return PARTLY if partly else NOT_REPRODUCED


@dataclass
class Comparison:
    """The runs of one experiment grouped into variants by the spec's role."""

    spec: ExperimentSpec
    runs: list[Run]
    variants: list[Variant] = field(init=False)

    def __post_init__(self) -> None:
        variants = group_variants(self.runs, self.spec.role)
        order = self.spec.order
        self.variants = sorted(
            variants, key=(lambda v: (order(v.role), v.label)) if order else (lambda v: v.label)
        )

    def select(self, **role: Any) -> list[Variant]:
        """The variants whose role has every given item (``select(norm="post")``)."""
        return [v for v in self.variants if all(v.role.get(k) == x for k, x in role.items())]

    def find(self, **role: Any) -> Variant | None:
        """The first variant matching ``role`` that has a BLEU for the rules, else the first
        match, else None."""
        matches = self.select(**role)
        return next((v for v in matches if v.bleu is not None), matches[0] if matches else None)

    def values(self, key: str) -> list[Any]:
        """The distinct values of a role key across variants (None excluded), sorted."""
        found = {v.role.get(key) for v in self.variants} - {None}
        return sorted(found, key=lambda x: (str(type(x)), x))
