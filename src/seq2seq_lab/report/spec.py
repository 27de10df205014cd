"""What a report section needs to know about one comparison, and how a verdict is reached.

An :class:`ExperimentSpec` is data plus small functions: how a run's role is read from its
config (never from the variant string, which is only a label), which pairs of variants are
contrasted, which plots carry the finding, the quality floor and the checks of the verdict
rule, all declared before any run. The rule is the same for every experiment and is printed in
each report next to the numbers it used:

1. **inconclusive (n seeds)** when a variant has fewer than ``min_seeds`` finished seeds (n:
   the fewest), or none;
2. **inconclusive (missing settings)** when a setting of the experiment's grid at the runs'
   scale has no finished run (named in the report);
3. **inconclusive (stopped by the wall clock)** when a finished run's training was ended by
   ``trainer.max_time``: variants slower per update then get fewer updates, and the comparison
   measures speed, not architecture (the protocol trains to an update budget or to early
   stopping; the wall clock is only a safety cap);
4. **inconclusive (not trained enough)** when a reference variant of the quality floor is below
   the floor's BLEU at the runs' scale (or the scale has no floor);
5. otherwise every check answers **holds**, **fails** or **undecided**, with the numbers it
   looked at and, when undecided, why: a variant it compares is not converged (which, and its
   rise), too few seeds (and how many the observed spread needs), the test set too small for
   the margin, test outputs or a setting missing. **reproduced** if every check holds;
   **partly** if the main check holds and another fails or is undecided (named);
   **not reproduced** if the main check fails; **inconclusive** (with the main check's reason)
   if it is undecided.

A check reads the interval of a difference (``report/evidence.py``) by a rule declared with it
(``report/rules.py``), and it is undecided while a variant it compares is still improving
(``Comparison.unconverged``), unless its text says it compares at equal updates (a check of
training stability or speed). A check never holds on two near-zero scores because of (4).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from seq2seq_lab.report.aggregate import Role, Variant, group_variants
from seq2seq_lab.report.gate import unconverged
from seq2seq_lab.report.runs import Run

REPRODUCED = "reproduced"
PARTLY = "partly"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NO_RULE = "no rule"
MIN_SEEDS = 3  # finished seeds per variant before any verdict (comparisons.md asks for 3)


HOLDS, FAILS, UNDECIDED = "holds", "fails", "undecided"

# What a check claims (``Check.kind``). A final-quality claim is the papers' kind: each model
# trained until it stops improving, so every variant it compares must have converged (or the
# one-sided rule of ``checks.judged`` spares it). A learning-speed claim compares variants at
# the same number of updates, the comparison's budget, which may leave some of them still
# rising by declaration (``equal_updates``). A claim about the models at initialisation reads
# no training at all.
FINAL_QUALITY = "final quality"
LEARNING_SPEED = "learning speed"
AT_INITIALISATION = "at initialisation"
KINDS = (FINAL_QUALITY, LEARNING_SPEED, AT_INITIALISATION)
# The verdict word of a comparison decided by a learning-speed main check says so
AT_EQUAL_UPDATES = "at equal updates"


@dataclass(frozen=True)
class Finding:
    """The answer of one check: ``holds`` is None when it is undecided, and ``why`` says why
    ("not converged: seq2seq +19.7 over its last quarter", "too few seeds: 3; the observed
    spread needs about 7"...); ``detail`` gives the numbers it looked at."""

    holds: bool | None
    detail: str
    why: str | None = None

    @property
    def answer(self) -> str:
        return {True: HOLDS, False: FAILS, None: UNDECIDED}[self.holds]

    def text(self) -> str:
        """ "holds", "fails" or "undecided (why)"."""
        return self.answer if self.holds is not None else f"{UNDECIDED} ({self.why or 'no reason'})"

    @property
    def reason(self) -> str:
        """The kind of reason an undecided check gives ("not converged", "too few seeds")."""
        return (self.why or "undecided").split(":")[0]


@dataclass(frozen=True)
class Precondition:
    """What must be true of the runs for a check to test its claim at all (E8: room for
    search to improve on greedy): ``unmet(comparison)`` says why it is not (None: met). An
    unmet precondition leaves the check undecided, never failed: the claim was not tested."""

    text: str  # what must hold, in words: "greedy's output is not the model's best on ..."
    unmet: Callable[[Comparison], str | None]


PRECONDITION_UNMET = "precondition unmet"


@dataclass(frozen=True)
class Check:
    """One claim of a published finding, tested on the aggregated runs; the spec names one
    ``main`` check, without which the finding is not reproduced at all."""

    text: str  # the claim with its threshold, as printed in the report
    test: Callable[[Comparison], Finding]
    main: bool = False
    kind: str = FINAL_QUALITY  # one of KINDS: only a check not of final quality may exempt
    precondition: Precondition | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"check kind {self.kind!r}: one of {', '.join(KINDS)}")

    def judge(self, comparison: Comparison) -> Finding:
        """The check's answer on ``comparison``, judged as a check of its kind; undecided with
        the reason when its precondition is unmet."""
        judging = comparison.judging(self.kind)
        unmet = self.precondition.unmet(judging) if self.precondition else None
        if unmet:
            return Finding(None, f"not tested: {unmet}", why=f"{PRECONDITION_UNMET}: {unmet}")
        return self.test(judging)

    @property
    def label(self) -> str:
        """The claim as the report and the README list it, with its kind."""
        needs = f"; tested only if {self.precondition.text}" if self.precondition else ""
        return f"[{self.kind}] " + self.text + needs + (" (main check)" if self.main else "")


@dataclass(frozen=True)
class QualityFloor:
    """The reference variants (every variant whose role has these items) must reach ``bleu``
    at the runs' scale (mean over seeds) before any check counts.

    With ``by`` (a role key), a scale's floor may instead map each value of that key to its own
    BLEU: E7's LSTM reference is a plain seq2seq in one family and an attention model in the
    other, whose scores at one budget lie far apart."""

    reference: Mapping[str, Any]
    # scale name -> BLEU, or (with ``by``) -> {value of role[by] -> BLEU}
    bleu: Mapping[str, float | Mapping[Any, float]]
    text: str  # the reference in words: "pre-LN with warmup, at every lr and depth"
    by: str | None = None

    def __post_init__(self) -> None:
        if self.by is None and any(isinstance(b, Mapping) for b in self.bleu.values()):
            raise ValueError(f"quality floor of {self.text}: a floor per role value needs `by`")

    def describe(self) -> str:
        floors = ", ".join(f"{_floor_text(b)} at `{scale}`" for scale, b in self.bleu.items())
        return f"{self.text} reaches test BLEU {floors} (mean over seeds)"

    def threshold(self, scale: str | None, role: Mapping[str, Any]) -> float | None:
        """The floor a reference variant of this ``role`` must reach at ``scale`` (None: no
        floor stated there)."""
        floor = self.bleu.get(scale)
        if isinstance(floor, Mapping):
            return floor.get(role.get(self.by))
        return floor


def _floor_text(floor: float | Mapping[Any, float]) -> str:
    if isinstance(floor, Mapping):
        return "(" + ", ".join(f"{key} {b:g}" for key, b in floor.items()) + ")"
    return f"{floor:g}"


@dataclass(frozen=True)
class Verdict:
    outcome: str  # "reproduced", "partly", "not reproduced", "inconclusive (2 seeds)", ...
    rule: str
    findings: tuple[tuple[Check, Finding], ...]
    # why the evidence is not there, or why the main check is undecided, or which checks make
    # a verdict "partly": one line each
    gates: tuple[str, ...] = ()

    @property
    def conclusive(self) -> bool:
        return not self.outcome.startswith(INCONCLUSIVE) and self.outcome != NO_RULE


class Plot(Protocol):
    """A figure that carries a finding (see ``seq2seq_lab.report.plots``)."""

    name: str
    caption: str

    def draw(self, comparison: Comparison, out_dir: Path) -> list[Path]:
        """Write PNG(s) under ``out_dir`` and return them; [] when the runs lack the data."""
        ...


@dataclass(frozen=True)
class Table:
    """Numbers behind a finding that the results table does not hold (the length probe's
    figures per join, say): ``rows(comparison)`` gives the header and rows, [] rows when the
    runs lack the data; the report prints it under ``title`` with ``note`` below."""

    title: str
    rows: Callable[[Comparison], tuple[list[str], list[list[Any]]]]
    note: str = ""


@dataclass(frozen=True)
class ExperimentSpec:
    """The one home of a comparison's finding: the report prints ``published``, ``expected``,
    the floor and the checks beside the runs' numbers, and ``seq2seq_lab.report.readmes``
    renders the same text into the comparison's README."""

    name: str  # the experiment_name runs record, e.g. "e1_attention"
    title: str
    published: str  # what the papers found (comparisons.md)
    expected: str  # what a faithful small-scale reproduction should show
    role: Callable[[Run], Role]
    floor: QualityFloor | None = None
    checks: tuple[Check, ...] = ()
    min_seeds: int = MIN_SEEDS
    contrasts: Callable[[Comparison], list[tuple[Variant, Variant]]] = lambda c: []
    plots: tuple[Plot, ...] = ()
    tables: tuple[Table, ...] = ()
    order: Callable[[Role], Any] | None = None  # table row order (default: by label)
    # A comparison made from another experiment's runs (the length probe reads E1's): that
    # experiment's name, and the results.json record without which its report is not written
    reads: str | None = None
    needs_record: str | None = None
    # ``published`` in a few words, for the README's short results table (readmes.py); the
    # claim of the main check, so it sits beside the main check's numbers ("" falls back to
    # ``published``)
    headline: str = ""

    def __post_init__(self) -> None:
        mains = [c for c in self.checks if c.main]
        if self.checks and len(mains) != 1:
            raise ValueError(f"{self.name}: {len(mains)} main checks; name exactly one")
        if self.checks and self.floor is None:
            raise ValueError(f"{self.name}: a spec with checks needs a quality floor")

    def rule_text(self) -> str:
        """The verdict rule in words, numbered like the checks."""
        if not self.checks:
            return "No verdict rule is defined for this comparison."
        numbered = "; ".join(f"({i}) {c.label}" for i, c in enumerate(self.checks, 1))
        return f"Checks: {numbered}. {self.outcome_rule()}"

    def outcome_rule(self) -> str:
        """How the evidence and the checks' answers make the verdict, in words."""
        main = next(i for i, c in enumerate(self.checks, 1) if c.main)
        return (
            f"Inconclusive unless every variant has at least {self.min_seeds} finished seeds, "
            "every setting of the grid was run, no run was stopped by the wall clock, and the "
            "quality floor holds: "
            f"{self.floor.describe()}. Each check holds, fails or is undecided (with its "
            "reason); a check comparing variants is undecided while one of them has not "
            "converged (a seed's best validation BLEU up by 1 or more over its last quarter of "
            "updates, a seed stalled below 1 BLEU, or a seed 5 or more below its variant's best "
            "seed: report/gate.py), except the variants a learning-speed check holds to its "
            "budget; a variant still rising on the side the claim predicts higher cannot move "
            "the difference toward the margin, so it keeps a check undecided only until the "
            "interval holds. Then: reproduced if every check holds; "
            f"partly if ({main}) holds and another does not; not reproduced if ({main}) fails; "
            f"inconclusive if ({main}) is undecided; decided by a learning-speed main check, "
            f"the verdict says '{AT_EQUAL_UPDATES}'. A variant's BLEU is the mean over seeds "
            "(a diverged run without a test score counts 0; a failed or interrupted run counts "
            "nowhere); differences are paired on the seeds both variants ran (where they share "
            "two or more) and count seed and test-sentence variance (report/evidence.py)."
        )

    def verdict(self, comparison: Comparison) -> Verdict:
        findings = tuple((check, check.judge(comparison)) for check in self.checks)
        if not self.checks:
            return Verdict(NO_RULE, self.rule_text(), findings)
        gates = evidence_gates(self, comparison)
        if gates:
            return Verdict(gates[0][0], self.rule_text(), findings, tuple(g for _, g in gates))
        main = next(f for c, f in findings if c.main)
        if main.holds is None:
            return Verdict(
                f"{INCONCLUSIVE} ({main.reason})",
                self.rule_text(),
                findings,
                (f"main check undecided: {main.why}",),
            )
        main_check = next(c for c in self.checks if c.main)
        at = f" {AT_EQUAL_UPDATES}" if main_check.kind == LEARNING_SPEED else ""
        if not main.holds:
            return Verdict(NOT_REPRODUCED + at, self.rule_text(), findings)
        others = [
            f"({i}) {f.text()}" for i, (_, f) in enumerate(findings, 1) if f.holds is not True
        ]
        outcome = (PARTLY if others else REPRODUCED) + at
        return Verdict(outcome, self.rule_text(), findings, tuple(others))


def evidence_gates(spec: ExperimentSpec, comparison: Comparison) -> list[tuple[str, str]]:
    """(outcome, reason) for each way the runs fall short of a verdict (module docstring,
    steps 1-4), in that order; [] when the evidence is there."""
    gates = []
    finished = {v.label: len({r.seed for r in v.runs if r.finished}) for v in comparison.variants}
    short = {label: n for label, n in finished.items() if n < spec.min_seeds}
    if not comparison.variants or short:
        fewest = min(short.values(), default=0)
        seeds = "seed" if fewest == 1 else "seeds"
        gates.append(
            (
                f"{INCONCLUSIVE} ({fewest} {seeds})",
                f"fewer than {spec.min_seeds} finished seeds: "
                + (", ".join(f"{k} {n}" for k, n in short.items()) or "no runs"),
            )
        )
    missing = comparison.missing_settings()
    if missing:
        gates.append(
            (
                f"{INCONCLUSIVE} (missing settings)",
                "no finished run of: " + "; ".join(" ".join(s) for s in missing),
            )
        )
    clocked = [r for r in comparison.runs if r.finished and r.stopped_by == "trainer.max_time"]
    if clocked:
        names = ", ".join(sorted({f"{r.variant} seed {r.seed}" for r in clocked}))
        gates.append(
            (
                f"{INCONCLUSIVE} (stopped by the wall clock)",
                f"training ended by trainer.max_time, not by its update budget or early "
                f"stopping: {names}",
            )
        )
    below = floor_shortfall(comparison)
    if below:
        gates.append((f"{INCONCLUSIVE} (not trained enough)", below))
    return gates


def floor_shortfall(comparison: Comparison) -> str | None:
    """Why the spec's quality floor does not hold for the runs (None when it does)."""
    floor = comparison.spec.floor
    if floor is None:
        return None
    scales = comparison.scales()
    if len(scales) != 1:
        return f"runs from scales {sorted(map(str, scales)) or 'not recorded'}: one scale needed"
    scale = next(iter(scales))
    if floor.bleu.get(scale) is None:
        return f"no quality floor is stated for scale `{scale}`"
    references = comparison.select(**floor.reference)
    if not references:
        return f"no run of the reference ({floor.text})"
    thresholds = {v.label: floor.threshold(scale, v.role) for v in references}
    unstated = [label for label, bleu in thresholds.items() if bleu is None]
    if unstated:
        return f"no quality floor is stated for {unstated[0]} at scale `{scale}`"
    low = [v for v in references if v.bleu is None or v.bleu < thresholds[v.label]]
    if not low:
        return None
    shown = ", ".join(f"{v.label} {'—' if v.bleu is None else f'{v.bleu:.2f}'}" for v in low)
    return f"below the floor of {_floor_text(floor.bleu[scale])} BLEU ({floor.text}): {shown}"


@dataclass
class Comparison:
    """The runs of one experiment grouped into variants by the spec's role."""

    spec: ExperimentSpec
    runs: list[Run]
    # The grid's settings (override lists, seed excluded) at the runs' scale, which the
    # missing-settings gate checks; None skips that gate (unit tests of single checks).
    grid: list[list[str]] | None = None
    # the kind of the check judging the runs (``judging``): a final-quality check may not
    # exempt a variant from the convergence gate (``checks.judged``)
    kind: str = FINAL_QUALITY
    variants: list[Variant] = field(init=False)

    def __post_init__(self) -> None:
        variants = group_variants(self.runs, self.spec.role)
        order = self.spec.order
        self.variants = sorted(
            variants, key=(lambda v: (order(v.role), v.label)) if order else (lambda v: v.label)
        )

    def judging(self, kind: str) -> Comparison:
        """The same runs and variants, judged by a check of ``kind``."""
        return self if kind == self.kind else replace_kind(self, kind)

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

    def scales(self) -> set[str | None]:
        """The scales the runs were made at (None: not recorded)."""
        return {run.scale for run in self.runs}

    def floor_bleu(self, role: Mapping[str, Any] | None = None) -> float | None:
        """The spec's quality floor at the runs' scale for a reference of ``role`` (None: no
        floor, no single scale, or none stated for that role)."""
        scales, floor = self.scales(), self.spec.floor
        if floor is None or len(scales) != 1:
            return None
        return floor.threshold(next(iter(scales)), role or {})

    def unconverged(self, variants: Iterable[Variant]) -> list[str]:
        """The variants a check may not judge as trained (``report/gate.py``: a seed still
        rising by CONVERGED_GAIN or more over its last quarter, or whose rise was not measured;
        a seed stalled near 0 BLEU; a seed on a plateau its variant's
        best seed left), each with its seeds: "luong (seed 1 +8.9 / seed 2 on a plateau ...)"."""
        found = []
        for variant in {id(v): v for v in variants}.values():
            reason = unconverged(variant)
            if reason is not None:
                found.append(reason.text())
        return found

    def missing_settings(self) -> list[list[str]]:
        """The grid settings no finished run was made with (a run is made with a setting when
        its recorded overrides include every item of it)."""
        if self.grid is None:
            return []
        made = [set(run.overrides) for run in self.runs if run.finished]
        return [setting for setting in self.grid if not any(set(setting) <= m for m in made)]


def replace_kind(comparison: Comparison, kind: str) -> Comparison:
    """A shallow copy of ``comparison`` (the same variant objects) with another check kind."""
    judged = copy.copy(comparison)
    judged.kind = kind
    return judged
