"""Each experiment is written once and its README block rendered from there: the committed
blocks match the specs and the composed configs, a changed check makes its block stale, the
grid and job counts are the config's, and rewriting keeps the hand-written text."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from conftest import REPO
from omegaconf import OmegaConf

from seq2seq_lab.errors import UserError
from seq2seq_lab.report import quality, readmes, summary
from seq2seq_lab.report.specs import own_specs, spec_module, specs

SPECS = own_specs()


@pytest.fixture(scope="module")
def rendered():
    return readmes.rendered()


def test_committed_readme_blocks_match_the_specs_and_configs(rendered):
    stale = [str(path) for path, text in rendered.items() if path.read_text() != text]
    assert not stale, f"stale; run python -m seq2seq_lab.report.readmes: {stale}"


def test_every_link_in_a_generated_block_resolves(rendered):
    blocks = 0
    for path, text in rendered.items():
        patterns = (readmes.BLOCK, readmes.TABLE_BLOCK, readmes.QUALITY_BLOCK, readmes.WALL_BLOCK)
        for pattern in patterns:
            for block in (m.group(0) for m in pattern.finditer(text)):
                blocks += 1
                for target in re.findall(r"\]\(([^)#]+)\)", block):
                    assert (path.parent / target).exists(), (path, target)
    # one per experiment, the index, two verdict tables, the quality table (the recipe study's),
    # the five-seed grid's wall times
    assert blocks == len(SPECS) + 5


def test_a_changed_check_makes_the_committed_block_stale(monkeypatch):
    spec = SPECS["e7_cells"]
    last = spec.checks[-1]
    assert "within ±1 BLEU" in last.text
    changed = dataclasses.replace(last, text=last.text.replace("within ±1 BLEU", "within ±2 BLEU"))
    monkeypatch.setitem(
        specs(), "e7_cells", dataclasses.replace(spec, checks=(*spec.checks[:-1], changed))
    )
    block = readmes.experiment_block("e7_cells")
    assert "within ±2 BLEU" in block
    assert block not in (REPO / "experiments" / "e7_cells" / "README.md").read_text()


def test_the_grid_and_jobs_are_the_configs():
    """E3's variants are the files of its group, its jobs those times the synthetic scale's seeds."""
    variants = sorted(
        p.stem for p in (REPO / "experiments" / "e3_scores" / "variants").glob("*.yaml")
    )
    seeds = str(OmegaConf.load(REPO / "conf" / "scale" / "synthetic.yaml").seeds).split(",")
    block = readmes.experiment_block("e3_scores")
    (line,) = [x for x in block.splitlines() if x.startswith("- `experiment/e3_scores=")]
    assert sorted(line.split("=", 1)[1].split("`")[0].split(",")) == variants
    assert f"| {len(variants)} x {len(seeds)} seeds |" in block
    updates = OmegaConf.load(REPO / "experiments" / "e3_scores" / "config.yaml").updates.synthetic
    assert f"{updates:,} updates; validation every" in block  # e3's budget at synthetic


def test_rewriting_replaces_only_the_block_and_check_reports_stale(tmp_path, monkeypatch):
    monkeypatch.setattr(readmes, "own_specs", lambda: {"e7_cells": SPECS["e7_cells"]})
    readme = tmp_path / "e7_cells" / "README.md"
    readme.parent.mkdir()
    stale_block = f"{readmes.BEGIN}\nold text\n{readmes.END}"
    readme.write_text(f"{stale_block}\n\n## Committed\n\nhand-written\n")
    assert readmes.main(["--experiments", str(tmp_path), "--check"]) == 1
    assert "old text" in readme.read_text()  # --check writes nothing
    assert readmes.main(["--experiments", str(tmp_path)]) == 0
    text = readme.read_text()
    assert "old text" not in text and text.endswith("\n\n## Committed\n\nhand-written\n")
    assert text.startswith(readmes.experiment_block("e7_cells"))
    index = (tmp_path / "README.md").read_text()  # created: the index and the verdict table
    assert readmes.BEGIN in index and readmes.TABLE_BEGIN in index
    assert readmes.main(["--experiments", str(tmp_path), "--check"]) == 0


def test_the_quality_block_is_the_reports_table_section_and_names_a_stale_report(tmp_path):
    source = "experiments/study/results/a/quality.md"
    report = tmp_path / source
    report.parent.mkdir(parents=True)
    table = "| model | test BLEU |\n|---|---|\n| Luong | 34.17 |\n\nVal gain, last quarter: ..."
    report.write_text(f"# title\n\n{quality.TABLE_HEADING}\n\n{table}\n\n## Search\n\n| x |\n")
    block = readmes.quality_block(report, tmp_path, source)
    assert block.startswith(readmes.QUALITY_BEGIN.format(source=source))
    assert block.endswith(readmes.QUALITY_END) and readmes.QUALITY_BLOCK.fullmatch(block)
    assert f"\n{table}\n" in block and "## Search" not in block  # the table section only
    assert f"]({source})" in block  # linked from the README's folder
    assert "Not run yet" in readmes.quality_block(tmp_path / "none.md", tmp_path, "none.md")
    report.write_text("# an old report without the table's heading\n")
    with pytest.raises(UserError, match="quality.md: no line '## Quality table"):
        readmes.quality_block(report, tmp_path, source)
    # the study's committed README carries the committed report's table
    readme = (REPO / "experiments" / "recipe_quality" / "README.md").read_text()
    source = readmes.QUALITY_BLOCK.search(readme).group("source")
    committed = readmes.quality_block(REPO / source, REPO, source)
    assert committed.split("\n", 2)[2] in readme


def _queue_file(path: Path, *passes: tuple[str, int, str, str]) -> None:
    """A wall_time.txt as experiments/queue.sh writes it: (end, seconds, finished, cpu)."""
    path.parent.mkdir(parents=True)
    lines = [f"experiment: {path.parent.parent.parent.name} (resumable queue)"]
    for end, seconds, finished, cpu in passes:
        lines.append(
            f"pass: finished {end}, wall_seconds: {seconds}, runs finished: {finished}, "
            f"exit: 0, cpu: {cpu}, gpu: none, command: python -m seq2seq_lab.train -m x=1,2"
        )
    path.write_text("\n".join(lines) + "\n")


def test_the_wall_time_block_sums_every_pass_of_every_stage_in_the_order_they_ran(tmp_path):
    source = "experiments/*/results/v2*/wall_time.txt"
    late = tmp_path / "experiments/e1_x/results/v2-8k/wall_time.txt"
    early = tmp_path / "experiments/e2_y/results/v2/wall_time.txt"
    _queue_file(late, ("2026-11-29T10:00:00Z", 3600, "1 of 4", "Xeon (AMX-BF16, AVX2) x 2"),
                ("2026-11-29T12:00:00Z", 1800, "4 of 4", "EPYC (AVX2) x 2"))  # fmt: skip
    _queue_file(early, ("2026-11-28T09:00:00Z", 600, "2 of 2", "EPYC (AVX2) x 2"))
    _queue_file(tmp_path / "experiments/e3_z/results/other/wall_time.txt",
                ("2026-11-27T09:00:00Z", 999, "1 of 1", "EPYC (AVX2) x 2"))  # fmt: skip
    block = readmes.wall_block(tmp_path, tmp_path / "experiments", source)
    assert readmes.WALL_BLOCK.fullmatch(block)
    assert readmes.WALL_BLOCK.fullmatch(block).group("source") == source
    rows = [line for line in block.splitlines() if line.startswith("| [") or "total" in line]
    assert rows == [
        "| [v2](e2_y/results/v2/wall_time.txt) | e2_y | 1 | 10 min (600 s) | 2 of 2 "
        "| EPYC (AVX2) x 2 |",
        "| [v2-8k](e1_x/results/v2-8k/wall_time.txt) | e1_x | 2 | 1 h 30 min (5,400 s) | 4 of 4 "
        "| Xeon (AMX-BF16, AVX2) x 2, EPYC (AVX2) x 2 |",
        "| **total** |  | 3 | **1 h 40 min** (6,000 s) |  |  |",
    ]


def test_the_committed_wall_time_block_is_the_grids_queue_files():
    text = (REPO / "experiments" / "README.md").read_text()
    marker = readmes.WALL_BLOCK.search(text)
    files = sorted(REPO.glob(marker.group("source")))
    assert files and all(
        f"]({f.relative_to(REPO / 'experiments')})" in marker.group(0) for f in files
    )


@pytest.mark.parametrize("name", sorted(SPECS))
def test_each_experiment_folder_holds_its_config_and_spec_and_restates_no_expectation(name):
    folder = REPO / "experiments" / name
    config = (folder / "config.yaml").read_text()
    module = spec_module(name)
    assert Path(module.__file__).resolve() == (folder / "spec.py").resolve()
    assert module.SPEC.name == name
    assert not re.search(r"(?im)^#.*\bexpect", config)


def _table_rows(text: str) -> list[list[str]]:
    block = readmes.TABLE_BLOCK.search(text).group(0)
    rows = [x for x in block.splitlines() if x.startswith("| ")]
    return [[c.strip() for c in row.strip("|").split(" | ")] for row in rows]


def test_the_readme_shows_the_short_table_and_experiments_readme_the_full_one(rendered):
    """The README's table has a few words a cell, each row linking to its report (a
    comparison with no report yet says so, with no link); the same rows, every number of the
    main check, stay in experiments/README.md."""
    short = _table_rows(rendered[REPO / "README.md"])
    full = _table_rows(rendered[REPO / "experiments" / "README.md"])
    assert short[0] == list(summary.SHORT_HEADER) and full[0] == list(summary.HEADER)
    assert len(short) == len(full) > 2 * len(SPECS)  # one row per comparison and data
    for row in short[1:]:
        link, published, ours, kind, verdict = row
        assert max(len(cell.split()) for cell in row[1:]) <= 10, row
        if ours == "not run under the current protocol yet":
            assert "](" not in link and verdict == kind == "—", row
            continue
        assert kind.startswith(("final quality", "learning speed", "at initialisation")), kind
        assert re.fullmatch(r"\[[^]]+\]\(experiments/\S+/report\.md\)", link), link
        assert verdict.startswith("**"), verdict
    e1 = next(r for r in short[1:] if "e1_attention/results/synthetic/e1_attention/" in r[0])
    assert e1[0].startswith("[E1 attention vs no attention (synthetic)]")  # no citation
    assert e1[1] == SPECS["e1_attention"].headline
    assert e1[4].startswith("**inconclusive**")
    # the full table keeps the whole published finding
    assert any(SPECS["e1_attention"].published in cell for r in full for cell in r)


def _entry(detail: str, verdict: str = "inconclusive (not converged)") -> dict:
    return {"verdict": verdict, "main_check": {"detail": detail}}


def test_the_short_ours_cell_is_the_main_checks_difference_in_a_few_words():
    one = (
        "seq2seq reversed - forward +2.47 [+1.87, +3.07], p 0.003 (paired) (interval alone: holds)"
    )
    assert summary.short_ours(_entry(one)) == "seq2seq reversed - forward: +2.5 [+1.9, +3.1]"
    # several against one variant: their range; a "scope:" prefix is left out
    several = (
        "bahdanau: gru - rnn +1.66 [+0.99, +2.33], p 0.009 (paired) (interval alone: undecided "
        "(too few seeds: 3; the observed spread needs about 6 [bahdanau: gru - rnn])); "
        "seq2seq: lstm - rnn +7.27 [+5.73, +8.82], p 0.002 (paired)"
    )
    assert summary.short_ours(_entry(several)) == "vs rnn: +1.7 to +7.3 (2 pairs)"
    # against several variants: the first (its interval's level named when not 95 %) and a count
    mixed = (
        "model.attention.scaled true: dot - general -2.05 [-4.23, +0.13] (90 %), p 0.111; "
        "ppl location - dot +0.24 [-0.81, +1.30], p 0.425 (paired, seeds only)"
    )
    assert summary.short_ours(_entry(mixed)) == "dot - general: -2.0 [-4.2, +0.1] (90 %); 1 more"
    # ratios keep two decimals; a detail without a difference says so
    ratio = (
        "b_L / b_1 on bucket 61-80: seq2seq 0.33 ± 0.03; bahdanau - seq2seq -0.06 [-0.28, +0.17]"
    )
    assert summary.short_ours(_entry(ratio)) == "bahdanau - seq2seq: -0.06 [-0.28, +0.17]"
    assert summary.short_ours({"verdict": "no rule"}) == "no difference measured"


def test_the_short_verdict_is_the_outcome_word_and_its_reason():
    assert summary.short_verdict(_entry("")) == "**inconclusive** (not converged)"
    assert summary.short_verdict(_entry("", "reproduced")) == "**reproduced**"
    rows = summary.short_rows([("[E9](r.md)", "a finding", None)])
    assert rows == [["[E9](r.md)", "a finding", "not run under the current protocol yet", "—", "—"]]
    learning = {"main_check": {"kind": "learning speed"}, "budget": 8000}
    assert summary.kind_text(learning) == "learning speed (8,000 updates)"
    assert summary.kind_text({"main_check": {"kind": "final quality"}}) == "final quality"
