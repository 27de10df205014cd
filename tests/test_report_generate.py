"""The generator end to end on synthetic sweeps: report.md + PNGs per experiment, the index,
mean +- std in the table, diverged and failed runs shown with their status, the across-seed
differences of the main contrasts, and the CLI."""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import pytest
from report_support import (
    corpus,
    metrics_rows,
    transformer_diagnostics,
    translate,
    write_run,
)

from seq2seq_lab.report.__main__ import main
from seq2seq_lab.report.generate import generate_report
from seq2seq_lab.report.markdown import hardware
from seq2seq_lab.report.readmes import COMMITTED, verdict_block
from seq2seq_lab.report.runs import find_runs
from seq2seq_lab.report.specs import own_specs, readers

SPECS = own_specs()

PNG = b"\x89PNG\r\n\x1a\n"


def e1_sweep(root: Path) -> dict[str, list[float]]:
    """An E1 sweep: seq2seq and Bahdanau (2 seeds each, Bahdanau clearly better), a
    Transformer that diverged before any checkpoint, a Luong job that crashed. Returns the
    test BLEU of each family's completed runs."""
    root.mkdir(parents=True)
    (root / "multirun.yaml").write_text("hydra: {}\n")
    sources, references = corpus(n=120)
    jobs = [
        ("plain", 1, "completed", 0.45),
        ("plain", 2, "completed", 0.4),
        ("bahdanau", 1, "completed", 0.1),
        ("bahdanau", 2, "completed", 0.12),
        ("transformer", 1, "diverged", None),
        ("luong", 1, "failed", None),
    ]
    bleu: dict[str, list[float]] = {}
    for num, (family, seed, status, error_rate) in enumerate(jobs):
        texts = None
        if error_rate is not None:
            texts = (sources, references, translate(references, error_rate, seed=seed))
        path = write_run(
            root / str(num),
            experiment="e1_attention",
            variant=family,
            family=family,
            seed=seed,
            status=status,
            texts=texts,
            tested=texts is not None,
            metrics=metrics_rows(20, blow_up=status == "diverged"),
            heatmap=family == "bahdanau",
            overrides=[f"model={family}", f"seed={seed}", "experiment=e1_attention"],
            # Bahdanau (the best) has stopped rising: +0.25 over the last quarter; seq2seq not
            validations=[
                [25 * k, 40.0 + (0.25 if k == 4 else 0.0) if family == "bahdanau" else 5.0 * k]
                for k in range(1, 5)
            ],  # fmt: skip
        )
        if texts is not None:
            import json

            bleu.setdefault(family, []).append(
                json.loads((path / "results.json").read_text())["test"]["bleu"]
            )
    return bleu


def e4_runs(root: Path) -> None:
    """Post- and pre-LN Transformers with diagnostics; post-LN without warmup diverged."""
    for num, (norm, warmup) in enumerate([(n, w) for n in ("post", "pre") for w in (True, False)]):
        norms, records = transformer_diagnostics(layers=3, post=norm == "post")
        diverged = norm == "post" and not warmup
        write_run(
            root / f"e4_{num}",
            experiment="e4_norm_warmup",
            variant=f"{norm}-LN_warmup-{warmup}",
            family="transformer",
            status="diverged" if diverged else "completed",
            config={
                "model.norm": norm,
                "model.encoder_layers": 3,
                "optim.lr": 1e-3,
                "schedule._target_": "seq2seq_lab.optim.schedules.InverseSqrt",
                "schedule.warmup_steps": 400,
                "schedule.linear_warmup": warmup,
            },
            bleu=None if diverged else 20.0,
            tested=not diverged,
            metrics=metrics_rows(30, blow_up=diverged),
            grad_norms=norms,
            validation=records,
        )


def e5_runs(root: Path) -> None:
    for num, (scale, heads) in enumerate([(s, h) for s in (True, False) for h in (16, 4)]):
        _, records = transformer_diagnostics(layers=2, post=False)
        init = {**records[0], "step": 0, "when": "init"}
        write_run(
            root / f"e5_{num}",
            experiment="e5_scaling",
            variant=f"scale-{scale}_heads{heads}_dk{256 // heads}",
            family="transformer",
            config={"model.attention.scale": scale, "model.d_model": 256, "model.heads": heads},
            bleu=20.0 if scale else 15.0,
            validation=[init, *records],
            metrics=metrics_rows(10),
        )


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    bleu = e1_sweep(root / "e1")
    e4_runs(root / "e4")
    e5_runs(root / "e5")
    write_run(root / "adhoc_run", experiment=None, variant="bahdanau", family="bahdanau", bleu=3.0)
    (root / "broken").mkdir()
    (root / "broken" / "results.json").write_text("not json")
    generated = generate_report(root)
    assert not generated.failed
    assert [u.path.parent.name for u in generated.unreadable] == ["broken"]
    return root, generated.index, {r.name: r for r in generated.reports}, bleu


def _row(markdown: str, label: str) -> list[str]:
    line = next(x for x in markdown.splitlines() if x.startswith(f"| **{label}**"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_every_experiment_gets_a_report_with_pngs_and_the_index_links_them(generated):
    root, index, reports, _ = generated
    assert index == root / "report" / "README.md"
    assert set(reports) == {"e1_attention", "e4_norm_warmup", "e5_scaling", "adhoc"}
    text = index.read_text()
    for name in reports:
        assert f"]({name}/report.md)" in text
        assert (root / "report" / name / "report.md").is_file()
        assert (root / "report" / name / "runs.csv").is_file()
    assert "broken/results.json" in text  # listed as unreadable, not fatal
    expected = {
        "e1_attention": ["bleu_by_length.png", "loss_curves.png"],
        "e4_norm_warmup": [
            "loss_curves.png",
            "grad_norms_init_3-layers.png",
            "layer_similarity.png",
        ],
        "e5_scaling": ["entropy_vs_dk.png", "loss_curves.png"],
    }
    for name, pngs in expected.items():
        markdown = (root / "report" / name / "report.md").read_text()
        for png in pngs:
            path = root / "report" / name / png
            assert path.read_bytes()[:8] == PNG, path
            assert f"]({png})" in markdown  # relative image link


def test_table_shows_mean_and_std_over_seeds(generated):
    root, _, _, bleu = generated
    markdown = (root / "report" / "e1_attention" / "report.md").read_text()
    for family in ("plain", "bahdanau"):
        values = bleu[family]
        expected = f"{statistics.fmean(values):.2f} ± {statistics.stdev(values):.2f}"
        row = _row(markdown, family)
        assert row[2] == "2 completed" and row[3] == expected
    assert "**Warning:**" not in markdown  # the seeds of each variant share their settings


def test_diverged_and_failed_runs_appear_with_their_status(generated):
    root, _, reports, _ = generated
    markdown = (root / "report" / "e1_attention" / "report.md").read_text()
    assert _row(markdown, "transformer")[2:4] == ["1 diverged", "—"]
    assert _row(markdown, "luong")[2:4] == ["1 failed", "—"]
    assert "non-finite loss (nan) at step 42" in markdown
    assert "RuntimeError: synthetic failure" in markdown
    assert "6 runs (4 completed, 1 diverged, 1 failed)" in markdown
    with open(root / "report" / "e1_attention" / "runs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["status"] for r in rows) == ["completed"] * 4 + ["diverged", "failed"]
    assert {r["config.experiment_name"] for r in rows} == {"e1_attention"}
    e4 = (root / "report" / "e4_norm_warmup" / "report.md").read_text()
    assert _row(e4, "post-LN_warmup-False")[2:4] == ["1 diverged", "—"]


def test_header_carries_the_sweep_command_seeds_versions_and_hardware(generated):
    root, _, _, _ = generated
    markdown = (root / "report" / "e1_attention" / "report.md").read_text()
    assert (
        "python -m seq2seq_lab.train -m experiment=e1_attention "
        "model=plain,bahdanau,transformer,luong seed=1,2"
    ) in markdown
    assert "**Seeds:** 1, 2" in markdown
    assert "torch 2.13.0+cpu" in markdown and "Test CPU (AVX2), 2 cores" in markdown
    assert "`nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0`" in markdown


def test_the_header_sums_the_wall_time_of_the_queues_passes(tmp_path):
    """run_real.sh's layout: OUT/runs (the runs), OUT/wall_time.txt (a label, then one line
    per pass, experiments/queue.sh), the report in OUT. Without the file: no such line."""
    out = tmp_path / "results/multi30k"
    e1_sweep(out / "runs")
    generate_report(out / "runs", out)
    assert "**Wall time:**" not in (out / "e1_attention" / "report.md").read_text()
    (out / "wall_time.txt").write_text(
        "experiment: e1_attention (resumable queue: one line per pass; the wall time is their sum)\n"
        "pass: finished 2026-11-24T18:21:48Z, wall_seconds: 5413, runs finished: 8 of 24, "
        "exit: 124, cpu: Xeon x 2, gpu: none, command: python -m seq2seq_lab.train -m ...\n"
        "pass: finished 2026-11-24T21:26:36Z, wall_seconds: 9541, runs finished: 21 of 24, "
        "exit: 124, cpu: Xeon x 2, gpu: none, command: python -m seq2seq_lab.train -m ...\n"
    )
    generate_report(out / "runs", out)
    markdown = (out / "e1_attention" / "report.md").read_text()
    line = next(x for x in markdown.splitlines() if x.startswith("- **Wall time:**"))
    assert line.startswith("- **Wall time:** 4 h 9 min (14,954 s) in 2 passes")
    assert "[wall_time.txt](../wall_time.txt)" in line
    assert (out / "e1_attention" / "../wall_time.txt").is_file()


def test_passes_run_side_by_side_count_their_time_once(tmp_path):
    """A SWEEP= queue beside the grid's (run_real.sh): both append to one wall_time.txt, and
    the hour they overlap is one hour of the grid's wall time, not two."""
    out = tmp_path / "results/multi30k"
    e1_sweep(out / "runs")
    line = "pass: finished {end}, wall_seconds: {s}, runs finished: 1 of 4, exit: 124, cpu: X x 2, gpu: none, command: c\n"  # noqa: E501
    (out / "wall_time.txt").write_text(
        "experiment: e1_attention\n"
        + line.format(end="2026-12-01T02:00:00Z", s=3600)  # 01:00-02:00
        + line.format(end="2026-12-01T05:00:00Z", s=7200)  # 03:00-05:00
        + line.format(end="2026-12-01T04:30:00Z", s=3600)  # 03:30-04:30, beside it
    )
    generate_report(out / "runs", out)
    markdown = (out / "e1_attention" / "report.md").read_text()
    line = next(x for x in markdown.splitlines() if x.startswith("- **Wall time:**"))
    assert line.startswith("- **Wall time:** 3 h 0 min (10,800 s) in 3 passes")
    assert "some side by side (their sum: 4 h 0 min)" in line


def test_differences_pool_seeds_and_find_the_clear_gain(generated):
    root, _, reports, _ = generated
    found = {d.system: d for d in reports["e1_attention"].assessment.differences}
    assert set(found) == {"bahdanau", "transformer"}  # luong: no finished run
    gain = found["bahdanau"]
    assert gain.baseline == "plain" and len(gain.system_scores) == 2 and gain.test_sampling
    assert gain.delta > 2 and gain.paired and gain.low < gain.delta < gain.high
    assert found["transformer"].system_scores == (0.0,)  # diverged before any checkpoint
    markdown = (root / "report" / "e1_attention" / "report.md").read_text()
    assert "## Differences across seeds" in markdown and f"{gain.delta:+.2f}" in markdown


def test_verdicts_and_rules_are_written(generated):
    root, _, reports, _ = generated
    markdown = (root / "report" / "e1_attention" / "report.md").read_text()
    assert "**Rule:** Checks: (1)" in markdown
    assert f"**Published:** {SPECS['e1_attention'].published}" in markdown
    # two seeds of seq2seq and Bahdanau, one of the Transformer, none finished of Luong
    verdicts = {name: report.assessment.verdict for name, report in reports.items()}
    assert verdicts["e1_attention"].outcome == "inconclusive (0 seeds)"
    assert "luong 0" in verdicts["e1_attention"].gates[0]
    assert "**Verdict: inconclusive (0 seeds)**" in markdown
    assert "Why no verdict:" in markdown
    # post-LN diverged, but pre-LN beside it recorded no validations: no finding
    main = verdicts["e4_norm_warmup"].findings[0][1]
    assert main.holds is None and main.why.startswith("not converged: pre-LN")
    assert verdicts["adhoc"].outcome == "no rule"


def test_one_heatmap_per_model_is_copied(generated):
    root, _, reports, _ = generated
    (heatmap,) = reports["e1_attention"].figures.heatmaps
    assert heatmap.variant == "bahdanau" and heatmap.source == "attention/step0000010/val0.png"
    # in the output folder's store, named after its run: one copy whichever reports show it
    name = "up-" + heatmap.run.removeprefix("../").replace("/", "-") + ".png"
    assert heatmap.run.startswith("../e1/") and heatmap.path == root / "report" / "heatmaps" / name
    markdown = (root / "report" / "e1_attention" / "report.md").read_text()
    assert f"](../heatmaps/{name})" in markdown
    # the models whose runs hold no image (a clone without the runs' images) are named
    without = reports["e1_attention"].figures.without_heatmap
    assert without and "bahdanau" not in without
    assert "No heatmap for " + ", ".join(f"**{v}**" for v in without) + ": " in markdown


def test_a_heatmap_is_kept_while_its_run_is_compared_and_removed_with_it(tmp_path):
    """A clone that did not make a run lacks its images (they are not committed): the report's
    earlier copy stays, attributed to that run, until the run leaves the comparison."""
    runs, out = tmp_path / "runs", tmp_path / "out"
    for num, (variant, heatmap) in enumerate([("bahdanau", True), ("luong", True)]):
        write_run(
            runs / str(num),
            experiment="e1_attention",
            variant=variant,
            family=variant,
            bleu=20.0,
            heatmap=heatmap,
        )
    heatmaps = out / "heatmaps"  # the output folder's store, shared by its reports
    generate_report(runs, out)
    first = (out / "e1_attention" / "report.md").read_text()
    sources = json.loads((heatmaps / "sources.json").read_text())
    assert sources["up-runs-0.png"] == {
        "reports": {"e1_attention": "bahdanau"},
        "run": "../runs/0",
        "seed": 1,
        "source": "attention/step0000010/val0.png",
    }
    (heatmaps / "stale.png").write_bytes(PNG)  # a model no longer compared

    # the other clone: no run images, the same runs
    for image in runs.glob("*/attention/*/*.png"):
        image.unlink()
    generated = generate_report(runs, out)
    (report,) = [r for r in generated.reports if r.name == "e1_attention"]
    assert [(h.variant, h.kept, h.seed) for h in report.figures.heatmaps] == [
        ("bahdanau", True, 1),
        ("luong", True, 1),
    ]
    assert sorted(p.name for p in heatmaps.iterdir()) == [
        "sources.json",
        "up-runs-0.png",
        "up-runs-1.png",
    ]
    assert json.loads((heatmaps / "sources.json").read_text()) == sources
    # the report reads the same in both clones
    assert report.path.read_text() == first
    assert "**bahdanau** (seed 1, `attention/step0000010/val0.png`)" in first

    # the Luong run is gone: its copy goes with it, and the report names the model as without
    import shutil

    shutil.rmtree(runs / "1")
    write_run(
        runs / "2", experiment="e1_attention", variant="luong", family="luong", seed=2, bleu=20.0
    )
    generated = generate_report(runs, out)
    (report,) = [r for r in generated.reports if r.name == "e1_attention"]
    assert [h.variant for h in report.figures.heatmaps] == ["bahdanau"]
    assert not (heatmaps / "up-runs-1.png").exists()
    assert "No heatmap for **luong**" in report.path.read_text()


def test_a_report_that_cannot_be_built_is_listed_and_the_others_are_written(tmp_path, monkeypatch):
    from seq2seq_lab.report.spec import Check
    from seq2seq_lab.report.specs import specs

    def broken(comparison):
        raise RuntimeError("check exploded")

    spec = specs()["e1_attention"]
    bad = type(spec)(**{**spec.__dict__, "checks": (Check("boom", broken, main=True),)})
    monkeypatch.setitem(specs(), "e1_attention", bad)
    write_run(tmp_path / "a", experiment="e1_attention", variant="v", family="plain", bleu=5.0)
    write_run(tmp_path / "b", experiment="e7_cells", variant="v", family="plain", bleu=5.0)
    generated = generate_report(tmp_path)
    assert generated.failed == {"e1_attention": "RuntimeError: check exploded"}
    assert [r.name for r in generated.reports] == ["e7_cells"]
    assert "RuntimeError: check exploded" in generated.index.read_text()


def test_cli_writes_to_out_and_reports_bad_paths_in_one_line(tmp_path, capsys):
    write_run(tmp_path / "runs" / "a", experiment="e7_cells", variant="v", family="plain", bleu=5.0)
    assert main([str(tmp_path / "runs"), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "e7_cells" / "report.md").is_file()
    assert "e7_cells: 1 runs, verdict inconclusive (1 seed)" in capsys.readouterr().out
    assert main([str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "no such directory" in err and "\n" not in err


def test_the_report_says_whether_every_variant_converged(generated):
    root, _, _, _ = generated
    markdown = (root / "report" / "e1_attention" / "report.md").read_text()
    line = next(x for x in markdown.splitlines() if x.startswith("- **Converged:**"))
    assert line.startswith("- **Converged:** **no**, ")
    assert "bahdanau yes (+0.2 ± 0.0)" in line and "plain **no** (seed 1 +5.00 / " in line
    header = next(x for x in markdown.splitlines() if x.startswith("| variant"))
    column = [c.strip() for c in header.strip("|").split("|")].index("val gain, last ¼")
    assert _row(markdown, "plain")[column] == "5.0 ± 0.0"  # 20 - 15: still rising


def test_each_report_writes_the_summary_the_readme_tables_show(generated, tmp_path):
    root, _, reports, _ = generated
    path = root / "report" / "e1_attention" / "verdict.json"
    entry = json.loads(path.read_text())
    assert entry["verdict"] == reports["e1_attention"].assessment.verdict.outcome
    assert entry["scale"] == "synthetic" and entry["data"] == ["synthetic test corpus"]
    assert entry["seeds"] == 0  # Luong: no finished seed
    assert [c["text"] for c in entry["checks"]] == [c.text for c in SPECS["e1_attention"].checks]
    bahdanau = next(v for v in entry["variants"] if v["label"] == "bahdanau")
    assert bahdanau["seeds"] == 2 and bahdanau["late_val_gain"] == pytest.approx(0.25)
    # the README table reads the committed copy: one row per comparison
    experiments = tmp_path / "experiments"
    # (one row per comparison and committed folder: the synthetic grid, then Multi30k)
    committed = experiments / "e1_attention" / COMMITTED[0] / "e1_attention"
    committed.mkdir(parents=True)
    (committed / "verdict.json").write_text(path.read_text())
    (committed / "report.md").write_text("the report\n")
    block = verdict_block(experiments, tmp_path)
    rows = [x for x in block.splitlines() if x.startswith("| ")][1:]  # below the header
    # (a comparison from another's runs, the length probe or E8: one row until it has a report)
    readers_ = sum(len(readers(n)) for n in SPECS)
    assert len(rows) == len(SPECS) * len(COMMITTED) + readers_ == 3 * len(SPECS) + 2
    (e1,) = [r for r in rows if "e1_attention/results/synthetic/e1_attention/report.md" in r]
    assert "(0 seeds, `synthetic`, synthetic test corpus)" in e1
    assert "**inconclusive (0 seeds)**: " in e1 and SPECS["e1_attention"].published[:40] in e1
    assert sum("not run under the current protocol yet" in r for r in rows) == len(rows) - 1
    # a report not committed yet is named, not linked; its row says the finding is as above
    assert rows[1].startswith("| E1 on synthetic_v2 | as above | not run")
    assert rows[2].startswith("| E1 on multi30k | as above | not run")
    # a folder only some comparisons have (EXTENDING): a row where its report is, after its base
    extended = experiments / "e1_attention" / "results" / "synthetic_v2-8k" / "e1_attention"
    extended.mkdir(parents=True)
    (extended / "verdict.json").write_text(path.read_text())
    (extended / "report.md").write_text("the report\n")
    rows = [x for x in verdict_block(experiments, tmp_path).splitlines() if x.startswith("| ")][1:]
    assert len(rows) == 3 * len(SPECS) + 2 + 1
    assert rows[2].startswith("| [E1 on synthetic_v2-8k](")
    assert rows[3].startswith("| E1 on multi30k | as above | not run")


def test_hardware_tells_apart_cpus_of_one_name_by_their_instruction_sets(tmp_path):
    """Two machines named "Intel(R) Xeon(R) Processor", with and without AMX, ran one grid at
    different speeds: the header names each group, and runs recorded before the instruction
    sets were are not counted with either."""
    features = [["AMX-BF16", "AVX512-BF16", "AVX512", "AVX2"], ["AVX512-BF16", "AVX512", "AVX2"],
                None, ["AVX512-BF16", "AVX512", "AVX2"]]  # fmt: skip
    for i, found in enumerate(features):
        path = write_run(tmp_path / str(i), experiment="e1_attention", variant="v", family="plain")
        results = json.loads((path / "results.json").read_text())
        results["hardware"]["cpu"] = "Intel(R) Xeon(R) Processor"
        results["hardware"]["cpu_features"] = found
        if found is None:
            del results["hardware"]["cpu_features"]
        (path / "results.json").write_text(json.dumps(results))
    runs, _ = find_runs(tmp_path)
    assert hardware(runs).split("; ") == [
        "Intel(R) Xeon(R) Processor (AMX-BF16, AVX512-BF16, AVX512, AVX2), 2 cores, 2 torch "
        "threads, no GPU (1 run)",
        "Intel(R) Xeon(R) Processor (AVX512-BF16, AVX512, AVX2), 2 cores, 2 torch threads, "
        "no GPU (2 runs)",
        "Intel(R) Xeon(R) Processor (instruction sets not recorded), 2 cores, 2 torch threads, "
        "no GPU (1 run)",
    ]
