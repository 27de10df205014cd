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
from seq2seq_lab.report import quality, readmes
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
        for pattern in (readmes.BLOCK, readmes.TABLE_BLOCK, readmes.QUALITY_BLOCK):
            for block in (m.group(0) for m in pattern.finditer(text)):
                blocks += 1
                for target in re.findall(r"\]\(([^)#]+)\)", block):
                    assert (path.parent / target).exists(), (path, target)
    # one per experiment, the index, two verdict tables, two quality tables
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
    """E3's variants are the files of its group, its jobs those times the cpu scale's seeds."""
    variants = sorted(
        p.stem for p in (REPO / "experiments" / "e3_scores" / "variants").glob("*.yaml")
    )
    seeds = str(OmegaConf.load(REPO / "conf" / "scale" / "cpu.yaml").seeds).split(",")
    block = readmes.experiment_block("e3_scores")
    (line,) = [x for x in block.splitlines() if x.startswith("- `experiment/e3_scores=")]
    assert sorted(line.split("=", 1)[1].split("`")[0].split(",")) == variants
    assert f"| {len(variants)} x {len(seeds)} seeds |" in block
    updates = OmegaConf.load(REPO / "experiments" / "e3_scores" / "config.yaml").updates.cpu
    assert f"{updates:,} updates; validation every" in block  # e3's budget at cpu


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
    # the committed READMEs carry the committed report's table
    readme = (REPO / "README.md").read_text()
    source = readmes.QUALITY_BLOCK.search(readme).group("source")
    committed = readmes.quality_block(REPO / source, REPO, source)
    assert committed.split("\n", 2)[2] in readme


@pytest.mark.parametrize("name", sorted(SPECS))
def test_each_experiment_folder_holds_its_config_and_spec_and_restates_no_expectation(name):
    folder = REPO / "experiments" / name
    config = (folder / "config.yaml").read_text()
    module = spec_module(name)
    assert Path(module.__file__).resolve() == (folder / "spec.py").resolve()
    assert module.SPEC.name == name
    assert not re.search(r"(?im)^#.*\bexpect", config)
