"""One comparison's result in a line: the verdict table of the READMEs.

Each report writes ``verdict.json`` beside its report.md (:func:`summary`): the published
finding, the verdict and its gates, the main check with its numbers, and every variant's test
BLEU over seeds. ``python -m seq2seq_lab.report.readmes`` renders the committed files into the
table of ``experiments/README.md`` (:func:`verdict_rows`: every number of the main check) and
the README's short one (:func:`short_rows`: a few words a cell), so a summary never says more
than its report: the same file is read by both.

    comparison | published finding | ours (mean ± std, seeds, scale, data) | kind | verdict
    comparison | published | ours | kind | verdict                   (the README's)

The kind column says what the main check claims: final quality (every compared model trained
until it stopped improving) or learning speed at the named budget (``report/spec.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seq2seq_lab.report.assessment import Assessment
from seq2seq_lab.report.rule_versions import CURRENT
from seq2seq_lab.report.spec import LEARNING_SPEED, Comparison

SUMMARY_FILE = "verdict.json"
HEADER = (
    "comparison",
    "published finding",
    "ours (mean ± std, seeds, scale, data)",
    "kind",
    "verdict",
)
SHORT_HEADER = ("comparison", "published", "ours", "kind", "verdict")
# One difference as the report writes it in a check's detail: "bahdanau - seq2seq +21.43
# [+17.02, +25.85]" (report/evidence.py); its label after any "scope:" prefix
_DIFFERENCE = re.compile(
    r"(?P<label>[^;:()\[\]]+? - [^;:()\[\]]+?) (?P<est>[+-]\d+(?:\.\d+)?) "
    r"\[(?P<lo>[+-]?\d+(?:\.\d+)?), (?P<hi>[+-]?\d+(?:\.\d+)?)\](?P<level> \(\d+ %\))?"
)


def summary(assessment: Assessment) -> dict[str, Any]:
    """The plain-data summary of one report (what ``verdict.json`` holds)."""
    comparison, verdict = assessment.comparison, assessment.verdict
    main = next(((c, f) for c, f in verdict.findings if c.main), None)
    finished_seeds = [len({r.seed for r in v.runs if r.finished}) for v in comparison.variants]
    return {
        "experiment": assessment.name,
        "comparison": assessment.spec.name,  # another than the experiment's own: specs.readers
        "title": assessment.spec.title,
        "published": assessment.spec.published,
        "verdict": verdict.outcome,
        "gates": list(verdict.gates),
        "scale": ", ".join(sorted(str(s) for s in comparison.scales())),
        "data": sorted({_data(run.results) for run in comparison.runs} - {""}),
        "seeds": min(finished_seeds, default=0),
        # the updates every variant was trained for (the budget a learning-speed check names)
        "budget": budget(comparison),
        "main_check": None
        if main is None
        else {
            "text": main[0].text,
            "kind": main[0].kind,
            "holds": main[1].holds,
            "why": main[1].why,
            "detail": main[1].detail,
        },
        "checks": [
            {
                "text": c.text,
                "kind": c.kind,
                "main": c.main,
                "holds": f.holds,
                "why": f.why,
                "detail": f.detail,
            }
            for c, f in verdict.findings
        ],
        "rule": None
        if assessment.declared is None
        else {
            "current_version": CURRENT,
            "declared_version": assessment.declared.version,
            "declared_verdict": assessment.declared.verdict,
            "declared_commit": assessment.declared.commit,
            "changes": [
                {"version": c.version, "commits": c.commits, "what": c.what}
                for c in assessment.declared.changes
            ],
        },
        "variants": [
            {
                "label": v.label,
                "bleu_mean": v.scores("bleu").mean,
                "bleu_std": v.scores("bleu").std,
                "seeds": v.scores("bleu").n,
                "updates": v.updates.mean,
                "late_val_gain": v.late_gain.mean,
            }
            for v in comparison.variants
        ],
    }


def budget(comparison: Comparison) -> int | None:
    """The most updates a variant's finished runs made, mean over seeds (None: not recorded):
    the budget at which a learning-speed check compares."""
    means = [v.updates.mean for v in comparison.variants if v.updates.mean is not None]
    return round(max(means)) if means else None


def kind_text(entry: dict[str, Any]) -> str:
    """What the main check claims: "final quality", or "learning speed (8,000 updates)"."""
    kind = (entry.get("main_check") or {}).get("kind") or "—"
    if kind == LEARNING_SPEED and entry.get("budget"):
        return f"{kind} ({entry['budget']:,} updates)"
    return kind


def _data(results: dict[str, Any]) -> str:
    source = (results.get("data") or {}).get("source")
    return str(source) if source else ""


def write_summary(assessment: Assessment, out_dir: Path) -> Path:
    path = out_dir / SUMMARY_FILE
    path.write_text(json.dumps(summary(assessment), indent=1) + "\n", encoding="utf-8")
    return path


def ours(entry: dict[str, Any]) -> str:
    """The "ours" cell: the main check's numbers, then seeds, scale and data."""
    main = entry.get("main_check") or {}
    numbers = main.get("detail") or "no main check"
    data = "; ".join(entry.get("data") or []) or "data not recorded"
    return f"{numbers} ({entry.get('seeds', 0)} seeds, `{entry.get('scale')}`, {data})"


def verdict_rows(
    entries: Sequence[tuple[str, str, dict[str, Any] | None]],
) -> list[list[str]]:
    """(link to the report, the published finding, its summary or None when the report has
    none yet) -> table rows."""
    rows = []
    for link, published, entry in entries:
        if entry is None:
            rows.append([link, published, "not run under the current protocol yet", "—", "—"])
            continue
        verdict = f"**{entry['verdict']}**"
        if entry.get("gates"):
            verdict += ": " + "; ".join(entry["gates"])
        verdict += declared_text(entry)
        rows.append([link, published, ours(entry), kind_text(entry), verdict])
    return rows


def differences(detail: str) -> list[tuple[str, float, float, float, str]]:
    """(label, estimate, interval's lower and upper end, its level when not 95 %: " (90 %)")
    of each difference a check's detail gives, in its order."""
    return [
        (m["label"].strip(), float(m["est"]), float(m["lo"]), float(m["hi"]), m["level"] or "")
        for m in _DIFFERENCE.finditer(detail)
    ]


def short_ours(entry: dict[str, Any]) -> str:
    """The main check's difference in a few words: one difference with its interval (95 %
    unless it says otherwise); several against one variant as their range ("vs seq2seq: +19.1
    to +22.4 (3 pairs)"); otherwise the first and how many more."""
    found = differences((entry.get("main_check") or {}).get("detail") or "")
    if not found:
        return "no difference measured"
    # a ratio's differences (the length probe's retention) lie under 1: two decimals there
    places = 2 if all(abs(x) < 1 for f in found for x in f[1:4]) else 1

    def one(label: str, est: float, lo: float, hi: float, level: str) -> str:
        return f"{label}: {est:+.{places}f} [{lo:+.{places}f}, {hi:+.{places}f}]{level}"

    if len(found) == 1:
        return one(*found[0])
    against = {label.rsplit(" - ", 1)[1] for label, *_ in found}
    if len(against) == 1:
        low, high = min(f[1] for f in found), max(f[1] for f in found)
        return f"vs {against.pop()}: {low:+.{places}f} to {high:+.{places}f} ({len(found)} pairs)"
    return f"{one(*found[0])}; {len(found) - 1} more"


def short_verdict(entry: dict[str, Any]) -> str:
    """The outcome word in bold, its reason after it: "**inconclusive** (not converged)"; and
    where the folder was declared under an older rule whose verdict differs, that one beside
    it: "; declared rule v1: inconclusive (not converged)"."""
    word, _, reason = entry["verdict"].partition(" (")
    return f"**{word}**" + (f" ({reason}" if reason else "") + declared_text(entry)


def declared_text(entry: dict[str, Any]) -> str:
    """ "; declared rule vK: <its verdict>" where it differs from the current verdict."""
    rule = entry.get("rule") or {}
    version, verdict = rule.get("declared_version"), rule.get("declared_verdict")
    if version is None or version == rule.get("current_version"):
        return ""
    if verdict is None:
        return f"; declared rule v{version}: no report under it"
    return "" if verdict == entry["verdict"] else f"; declared rule v{version}: {verdict}"


def short_rows(
    entries: Sequence[tuple[str, str, dict[str, Any] | None]],
) -> list[list[str]]:
    """(link to the report, the published finding in a few words, its summary or None) ->
    rows of the README's short table."""
    return [
        [link, published, short_ours(entry), kind_text(entry), short_verdict(entry)]
        if entry is not None
        else [link, published, "not run under the current protocol yet", "—", "—"]
        for link, published, entry in entries
    ]


def read_summary(path: Path) -> dict[str, Any] | None:
    """A committed verdict.json, or None when the report has none (made before it existed)."""
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))
