"""Which verdict rule a results folder was declared under, and what changed since.

The verdict rule (the gate, the checks, their kinds and margins) must be fixed before the runs
it judges. Every results folder records, in ``rules.json`` beside its reports, the rule version
in force when its first run was made (:func:`record` writes the current one into a folder that
has none), and, for folders made before it, the verdict each of its comparisons had under that
rule, with the commit of that report:

    {"rule_version": 1, "first_commit": "12fdedbe",
     "declared": {"e2_reversal": {"verdict": "inconclusive (not converged)", "commit": "e819b3fe"}}}

A report is always made under the current rule; where the folder's declared version is older,
the report shows the declared verdict beside the current one, and every change between them
(``CHANGES``, the one home of the rule's history).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RULES_FILE = "rules.json"


@dataclass(frozen=True)
class RuleChange:
    """A change of the verdict rule after some results existed: the version it made, the
    commit(s) that made it, and what it changed."""

    version: int
    commits: str
    what: str


# The rule's history; version 1 is the rule of the first committed reports.
CHANGES = (
    RuleChange(
        2,
        "62b60ead",
        "main checks read a baseline held to the budget at equal updates (E2's plain seq2seq)",
    ),
    RuleChange(3, "a27c833e", "E8 judges the converged models only and names the others"),
    RuleChange(4, "7f8b2aac", "E1 holds plain seq2seq to the budget in checks 2 and 3 too"),
    RuleChange(
        5,
        "a66a3354, 76b5df10, e2feaffa, 285e53ff",
        "convergence per seed with stalled runs and plateaus; final-quality and "
        "learning-speed checks, the one-sided rule; preconditions (E8: room for search); "
        "E8's decoder covariance; the dominant variance term named",
    ),
)
CURRENT = CHANGES[-1].version


@dataclass(frozen=True)
class Declared:
    """A comparison's verdict under its folder's declared rule (None: no report was made
    under it), and the changes of the rule since."""

    version: int
    verdict: str | None
    commit: str | None
    changes: tuple[RuleChange, ...]

    @property
    def current(self) -> bool:
        return self.version == CURRENT

    def text(self, current_verdict: str) -> str:
        """The declared rule and its verdict beside the current one, in a line."""
        if self.current:
            return f"the current rule, version {CURRENT}, declared when the first run was made"
        declared = (
            f"**{self.verdict}** (its report at {self.commit})"
            if self.verdict
            else "no report was made under it"
        )
        changes = "; ".join(f"v{c.version} ({c.commits}): {c.what}" for c in self.changes)
        return (
            f"declared under rule version {self.version} (in force when the folder's first run "
            f"was committed): {declared}; under the current rule, version {CURRENT}: "
            f"**{current_verdict}**. Changed since: {changes}"
        )


def read_declared(folder: Path, comparison: str) -> Declared | None:
    """The declared rule of ``comparison``'s reports in results folder ``folder`` (None: the
    folder records none)."""
    path = folder / RULES_FILE
    if not path.is_file():
        return None
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    version = int(record["rule_version"])
    entry = (record.get("declared") or {}).get(comparison) or {}
    return Declared(
        version=version,
        verdict=entry.get("verdict"),
        commit=entry.get("commit"),
        changes=tuple(c for c in CHANGES if c.version > version),
    )


def record(folder: Path) -> None:
    """Record the current rule version in a results folder that records none yet (its first
    report, made right after its first runs)."""
    path = folder / RULES_FILE
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"rule_version": CURRENT}, indent=1) + "\n", encoding="utf-8")
