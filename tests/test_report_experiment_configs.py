"""The report specs agree with the real experiment configs: every job of each experiment's
sweep grid (experiments/<name>/config.yaml, seeds aside) gets a distinct role from its composed
config, and with a score for every job, every verdict check has its data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import compose_config
from omegaconf import OmegaConf
from report_support import entropy_records, transformer_diagnostics

from seq2seq_lab.checkout import EXPERIMENTS_DIR
from seq2seq_lab.checkpoint import family_of
from seq2seq_lab.config import instantiate
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.report.assessment import assess
from seq2seq_lab.report.grid import axes, compose_experiment, grid_settings, settings
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Comparison
from seq2seq_lab.report.specs import own_specs

SPECS = own_specs()


def grid(experiment: str, scale: str = "smoke") -> list[list[str]]:
    """The override lists of the experiment's sweep jobs at ``scale`` (one seed)."""
    base = [f"experiment={experiment}", f"scale={scale}"]
    return [base + job for job in settings(axes(compose_experiment(experiment, scale)))]


def job_run(overrides: list[str], path: Path, bleu: float) -> Run:
    # with the job's Hydra config set, as in a real job: the config reads runtime choices
    cfg = compose_config("train", overrides, output_dir=path)
    config = OmegaConf.to_container(cfg, resolve=False)
    config["model"] = OmegaConf.to_container(cfg.model, resolve=True)
    config["optim"] = OmegaConf.to_container(cfg.optim, resolve=True)
    config["schedule"] = OmegaConf.to_container(cfg.schedule, resolve=True)
    buckets = {"1-10": {"bleu": bleu, "count": 50}, "11-20": {"bleu": bleu / 2, "count": 50}}
    results = {
        "status": "completed",
        "experiment": cfg.experiment_name,
        "variant": " ".join(overrides[2:]),
        "seed": 1,
        "scale": "synthetic",  # the floors of the synthetic scale; the scores below are above them
        "overrides": overrides[2:],
        "family": family_of(config["model"]),
        "config": config,
        "test": {"split": "test", "bleu": bleu, "bleu_by_length": buckets},
    }
    path.mkdir(parents=True)
    (path / "results.json").write_text(json.dumps(results))
    (path / "diagnostics").mkdir()
    records = entropy_records(1.0 + bleu / 100)
    if results["family"] == "transformer":
        # what TransformerDiagnostics writes beside the entropies: gradient norms at init and
        # the similarity of consecutive blocks (E4's checks read both)
        post = config["model"]["norm"] == "post"
        norms, diagnostics = transformer_diagnostics(config["model"]["encoder_layers"], post)
        (path / "diagnostics" / "grad_norms_init.json").write_text(json.dumps(norms))
        for record in records:
            record["similarity"] = diagnostics[0]["similarity"]
    lines = "".join(json.dumps(r) + "\n" for r in records)
    (path / "diagnostics" / "validation.jsonl").write_text(lines)
    return Run(path, results)


@pytest.mark.parametrize("experiment", sorted(SPECS))
def test_every_job_of_the_grid_has_a_distinct_role_and_every_check_its_data(experiment, tmp_path):
    spec = SPECS[experiment]
    jobs = grid(experiment)
    assert len(jobs) >= 2
    runs = [job_run(job, tmp_path / str(i), bleu=40.0 + i) for i, job in enumerate(jobs)]
    roles = [spec.role(run) for run in runs]
    for job, role in zip(jobs, roles):
        assert role and None not in role.values(), (job, role)
    assert len({json.dumps(r, sort_keys=True) for r in roles}) == len(jobs), roles
    comparison = Comparison(spec, runs, grid=[job[2:] for job in jobs])
    assert comparison.missing_settings() == []  # each job's recorded overrides cover its setting
    for check, finding in spec.verdict(comparison).findings:
        # the grid gives every check its variants: undecided it may be (one seed, no test
        # outputs, no validations), but never for a variant or setting it lacks
        assert not (finding.why or "").startswith("missing"), (check.text, finding.why)
    assert spec.contrasts(comparison), "the grid yields no contrast to test"


# the comparisons of the five-seed grid at synthetic_v2, as its command names them (E1 in two
# of its stages; a config key such as e4_lrs.synthetic_v2 in an override is not one)
V2_GRID = sorted(
    set(
        re.findall(
            r"\be\d_\w+\b(?![.=])",
            (EXPERIMENTS_DIR / "run_synthetic_v2.sh").read_text().split("run_real.sh", 1)[1],
        )
    )
)


@pytest.mark.parametrize("experiment", V2_GRID)
def test_the_synthetic_v2_cut_keeps_what_the_main_check_reads(experiment, tmp_path):
    """Where a grid is cut to fit the scale's budget (sizes/synthetic_v2.yaml), the variants
    left give the main check its data: a cut may leave other checks without a setting, never
    the main one (it would make the comparison undecidable by construction)."""
    spec = SPECS[experiment]
    jobs = grid(experiment, "synthetic_v2")
    runs = [job_run(job, tmp_path / str(i), bleu=40.0 + 5 * i) for i, job in enumerate(jobs)]
    comparison = Comparison(spec, runs, grid=[job[2:] for job in jobs])
    for check, finding in spec.verdict(comparison).findings:
        if check.main:
            assert not (finding.why or "").startswith("missing"), (check.text, finding.why)


def test_the_synthetic_v2_grid_names_existing_comparisons_once():
    assert set(V2_GRID) <= set(SPECS) and len(V2_GRID) >= 5


@pytest.mark.parametrize("scale", ["smoke", "synthetic", "synthetic_v2", "multi30k", "full"])
@pytest.mark.parametrize("experiment", sorted(SPECS))
def test_every_job_of_the_grid_builds_its_network_at_every_scale(experiment, scale, tmp_path):
    """A grid that composes can still fail to build (E3's dot score once met the bidirectional
    encoder of Luong's multi30k size): every job's network is built at every scale, with a
    small vocabulary (the sizes under test are the model's, not the embeddings')."""
    base = [f"experiment={experiment}", f"scale={scale}"]
    for job in settings(axes(compose_experiment(experiment, scale))):
        cfg = compose_config("train", base + job, output_dir=tmp_path)
        model = OmegaConf.to_container(cfg.model, resolve=True)
        try:
            instantiate(model, key="model", src_vocab_size=64, tgt_vocab_size=64)
        except ConfigError as error:
            pytest.fail(f"{' '.join(base + job)}: {error}")


def test_a_grid_moved_by_a_queues_overrides_is_checked_against_what_its_runs_swept(tmp_path):
    """run_synthetic_v2.sh's third stage gives E4 `e4_lrs.synthetic_v2=3e-3`: the report
    expects the settings those runs were swept over (lr 0.003), not the config's lr 1e-3, and
    finds none missing; without the shared overrides every setting would be."""
    moved = ["e4_lrs.synthetic_v2=0.003", "updates.synthetic_v2=4000"]
    base = ["experiment=e4_norm_warmup", "scale=synthetic_v2"]
    swept = settings(axes(compose_experiment("e4_norm_warmup", "synthetic_v2", moved)))
    jobs = [base + job + moved for job in swept]
    runs = [job_run(job, tmp_path / str(i), bleu=60.0 + i) for i, job in enumerate(jobs)]
    for run in runs:
        run.results["scale"] = "synthetic_v2"
    assessment = assess("e4_norm_warmup", runs, tmp_path)
    assert {s for job in assessment.comparison.grid for s in job if "optim.lr" in s} == {
        "optim.lr=0.003"
    }
    assert assessment.comparison.missing_settings() == []
    unmoved = grid_settings("e4_norm_warmup", "synthetic_v2")
    assert unmoved and all("optim.lr=0.001" in job for job in unmoved)
