"""The rule a results folder was declared under (report/rule_versions.py): a new folder records
the current version; a folder declared under an older one shows its verdict then beside the
current verdict, in the report, verdict.json and the README tables."""

from __future__ import annotations

import json

from report_support import write_run

from seq2seq_lab.report.generate import generate_report
from seq2seq_lab.report.rule_versions import CHANGES, CURRENT, RULES_FILE
from seq2seq_lab.report.summary import short_verdict, verdict_rows


def runs(root):
    for seed in (1, 2, 3):
        write_run(root / f"plain_{seed}", experiment="e7_cells", variant="plain",
                  family="plain", seed=seed, bleu=5.0)  # fmt: skip


def test_a_new_results_folder_records_the_current_rule(tmp_path):
    runs(tmp_path / "runs")
    generate_report(tmp_path / "runs", tmp_path / "folder")
    recorded = json.loads((tmp_path / "folder" / RULES_FILE).read_text())
    assert recorded == {"rule_version": CURRENT}
    report = (tmp_path / "folder" / "e7_cells" / "report.md").read_text()
    assert f"**Rule version:** the current rule, version {CURRENT}" in report


def test_an_older_declared_rule_is_shown_beside_the_current_verdict(tmp_path):
    runs(tmp_path / "runs")
    folder = tmp_path / "folder"
    folder.mkdir()
    declared = {"e7_cells": {"verdict": "partly", "commit": "0123abcd"}}
    (folder / RULES_FILE).write_text(json.dumps({"rule_version": 1, "declared": declared}))
    generate_report(tmp_path / "runs", folder)
    report = (folder / "e7_cells" / "report.md").read_text()
    line = next(x for x in report.splitlines() if x.startswith("**Rule version:**"))
    assert "declared under rule version 1" in line and "**partly** (its report at 0123abcd)" in line
    assert all(c.commits in line for c in CHANGES)  # every change since, with its commits
    entry = json.loads((folder / "e7_cells" / "verdict.json").read_text())
    assert entry["rule"]["declared_version"] == 1 and entry["rule"]["declared_verdict"] == "partly"
    assert short_verdict(entry).endswith("; declared rule v1: partly")
    assert verdict_rows([("x", "y", entry)])[0][-1].endswith("; declared rule v1: partly")


def test_the_same_verdict_under_both_rules_shows_nothing_beside_it():
    entry = {"verdict": "partly", "rule": {"current_version": CURRENT, "declared_version": 1,
                                           "declared_verdict": "partly"}}  # fmt: skip
    assert short_verdict(entry) == "**partly**"
