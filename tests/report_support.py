"""Builders of synthetic run directories for the report tests (no training): results.json
as ``seq2seq_lab.pipeline.training.train`` writes it, test texts, csv/metrics.csv, diagnostics files
and an attention heatmap. A helper module, not a test module (pytest collects test_*.py
only); the report tests import it from tests/, which pytest puts on sys.path."""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seq2seq_lab.metrics.corpus import corpus_bleu, corpus_scores
from seq2seq_lab.metrics.length_buckets import bleu_by_length
from seq2seq_lab.record.results import write_results
from seq2seq_lab.report.run_table import nest as nested  # {"model.norm": "post"} -> nested

SIGNATURE = {
    "bleu": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0",
    "chrf": "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0",
    "ter": "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0",
}
FAMILY_TARGETS = {
    "plain": "seq2seq_lab.models.recurrent.plain.PlainSeq2SeqNetwork",
    "bahdanau": "seq2seq_lab.models.recurrent.bahdanau.BahdanauNetwork",
    "luong": "seq2seq_lab.models.recurrent.luong.LuongNetwork",
    "transformer": "seq2seq_lab.models.transformer.network.TransformerNetwork",
}
WORDS = [f"w{i}" for i in range(60)]


def corpus(n: int = 120, seed: int = 0) -> tuple[list[str], list[str]]:
    """(sources, references): lengths spread over 3..45 words so several length buckets have
    >= 10 sentences."""
    rng = random.Random(seed)
    sources, references = [], []
    for i in range(n):
        length = 3 + (i * 43) // n
        sources.append(" ".join(rng.choices(WORDS, k=length)))
        references.append(" ".join(rng.choices(WORDS, k=length)))
    return sources, references


def translate(references: Sequence[str], error_rate: float, seed: int, long_penalty: float = 0.0):
    """Hypotheses that replace each reference word with probability error_rate (+ long_penalty
    per word of length beyond 10: a system that degrades on long sentences)."""
    rng = random.Random(seed)
    hyps = []
    for ref in references:
        words = ref.split()
        p = min(0.95, error_rate + long_penalty * max(0, len(words) - 10))
        hyps.append(" ".join(w if rng.random() > p else rng.choice(WORDS) for w in words))
    return hyps


def metrics_rows(
    steps: int, start: float = 6.0, end: float = 2.0, blow_up: bool = False
) -> list[dict]:
    """Sparse CSVLogger-like rows: train/loss every step, val/loss every 5 steps."""
    rows = []
    for step in range(steps):
        loss = start + (end - start) * step / max(1, steps - 1)
        if blow_up and step > steps // 2:
            loss = start * 10 ** (step - steps // 2)
        rows.append({"epoch": 0, "step": step, "train/loss": loss, "lr-Adam": 1e-3})
        if step % 5 == 4:
            rows.append({"epoch": 0, "step": step, "val/loss": loss + 0.3, "val/bleu": 10.0})
    return rows


def write_run(
    path: Path,
    *,
    experiment: str | None,
    variant: str,
    family: str,
    seed: int = 1,
    status: str = "completed",
    config: dict[str, Any] | None = None,
    bleu: float | None = None,
    long_bleu: float | None = None,
    texts: tuple[list[str], list[str], list[str]] | None = None,
    metrics: list[dict] | None = None,
    grad_norms: dict[str, float] | None = None,
    validation: list[dict] | None = None,
    heatmap: bool = False,
    overrides: list[str] | None = None,
    tested: bool = True,
    scale: str | None = "synthetic",
    validations: list[list[float]] | None = None,
    best_val_bleu: float = 1.0,
    cpu: tuple[str, list[str]] = ("Test CPU", ["AVX2"]),
    bleu_only: bool = False,
) -> Path:
    """One run directory. Scores: from ``texts`` (sources, references, hypotheses) with the
    real metrics, else ``bleu`` with two length buckets (1-10 at ``bleu``, 41-50 at
    ``long_bleu``, 100 sentences each)."""
    path.mkdir(parents=True, exist_ok=True)
    dotted = {
        "experiment_name": experiment,
        "variant": variant,
        "seed": seed,
        "model._target_": FAMILY_TARGETS[family],
        "trainer.max_epochs": 5,
        **(config or {}),
    }
    results: dict[str, Any] = {
        "status": status,
        "experiment": experiment,
        "variant": variant,
        "seed": seed,
        "run_dir": str(path),
        "scale": scale,
        "overrides": overrides or [f"seed={seed}"],
        "versions": {"python": "3.11.7", "torch": "2.13.0+cpu", "sacrebleu": "2.6.0"},
        "hardware": {
            "cpu": cpu[0],
            "cpu_features": cpu[1],
            "cpu_count": 2,
            "torch_threads": 2,
            "cuda": False,
        },
        "config": nested(dotted),
    }
    if status == "failed":
        results["error"] = "RuntimeError: synthetic failure"
        write_results(path / "results.json", results)
        return path
    results["family"] = family
    results["parameters"] = 1000
    results["data"] = {
        "source": "synthetic test corpus",
        "tokenizer": "word",
        "splits": {"train": {"src_len": {"max": 25}}},
    }
    results["timing"] = {"train_seconds": 60.0 + seed, "train_tokens_per_second": 1000.0 + seed}
    results["training"] = {"steps": 100, "epochs": 2, "best_val_bleu": best_val_bleu}
    if validations is not None:
        results["training"]["validations"] = validations
    if status == "diverged":
        results["status_reason"] = "non-finite loss (nan) at step 42"
    if status == "interrupted":
        results["status_reason"] = "interrupted by SIGTERM"
    if tested and (texts is not None or bleu is not None):
        if texts is not None:
            sources, references, hypotheses = texts
            buckets = bleu_by_length(sources, hypotheses, references)
            if bleu_only:  # chrF and TER cost seconds a run; the verdicts read BLEU
                test = {"bleu": corpus_bleu(hypotheses, references)}
            else:
                scores = corpus_scores(hypotheses, references)
                test = {"bleu": scores.bleu, "chrf": scores.chrf, "ter": scores.ter}
            for kind, lines in zip(("sources", "references", "hypotheses"), texts):
                (path / f"{kind}.test.txt").write_text("".join(x + "\n" for x in lines))
        else:
            long = bleu if long_bleu is None else long_bleu
            buckets = {"1-10": {"bleu": bleu, "count": 100}, "41-50": {"bleu": long, "count": 100}}
            test = {"bleu": bleu, "chrf": bleu + 20, "ter": 100 - bleu}
        results["test"] = {
            "split": "test",
            **test,
            "ppl": 5.0,
            "loss": 1.6,
            "sentences": 200,
            "bleu_by_length": buckets,
            "decoding": {"beam_size": 5},
        }
        results["sacrebleu_signature"] = SIGNATURE
    write_results(path / "results.json", results)
    if metrics is not None:
        (path / "csv").mkdir(exist_ok=True)
        columns = ["epoch", "step", "train/loss", "lr-Adam", "val/loss", "val/bleu"]
        with open(path / "csv" / "metrics.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=columns)
            writer.writeheader()
            writer.writerows(metrics)
    if grad_norms is not None or validation is not None:
        (path / "diagnostics").mkdir(exist_ok=True)
    if grad_norms is not None:
        (path / "diagnostics" / "grad_norms_init.json").write_text(json.dumps(grad_norms))
    if validation is not None:
        lines = "".join(json.dumps(r) + "\n" for r in validation)
        (path / "diagnostics" / "validation.jsonl").write_text(lines)
    if heatmap:
        image = path / "attention" / "step0000010" / "val0.png"
        image.parent.mkdir(parents=True)
        image.write_bytes(b"\x89PNG\r\n\x1a\n synthetic")
    return path


def transformer_diagnostics(
    layers: int, post: bool, top: float | None = None
) -> tuple[dict, list[dict]]:
    """(grad_norms_init, validation records) shaped like TransformerDiagnostics' files: norms
    growing toward the output under post-LN and falling under pre-LN; ``top`` the similarity
    of the last two blocks in both stacks (default: as the others, 0.8 and 0.7)."""
    norms = {}
    for stack in ("encoder", "decoder"):
        for i in range(layers):
            growth = (1.0 + i) if post else 1.0 / (1.0 + i)
            norms[f"{stack}.{i}.self_attn"] = 0.1 * growth
            if stack == "decoder":
                norms[f"{stack}.{i}.cross_attn"] = 0.1 * growth
            norms[f"{stack}.{i}.ffn"] = 0.2 * growth
    similarity = {"encoder": [0.8] * (layers - 1), "decoder": [0.7] * (layers - 1)}
    if top is not None:
        similarity = {stack: [*values[:-1], top] for stack, values in similarity.items()}
    records = [
        {
            "step": step,
            "similarity": similarity,
            "entropy": {
                "encoder.self_attn": [[1.5, 1.6]] * layers,
                "decoder.self_attn": [[1.0, 1.1]] * layers,
                "decoder.cross_attn": [[1.4, 1.3]] * layers,
            },
        }
        for step in (10, 20)
    ]
    return norms, records


def entropy_records(value: float, validated: float | None = None) -> list[dict]:
    """TransformerDiagnostics' records: at init (step 0) every head has entropy ``value``
    (mean = value), after the validation at step 10 ``validated`` (default: ``value``)."""

    def record(step: int, when: str, h: float) -> dict:
        entropy = {k: [[h, h]] for k in ("encoder.self_attn", "decoder.cross_attn")}
        similarity = {"encoder": [], "decoder": []}
        return {"step": step, "when": when, "similarity": similarity, "entropy": entropy}

    return [
        record(0, "init", value),
        record(10, "validation", value if validated is None else validated),
    ]


def converging(gain: float, level: float = 30.0) -> list[list[float]]:
    """Validations (step, BLEU) whose best rose by ``gain`` over the last quarter of 400
    updates (training/convergence.py): 0 is converged, 1 or more still improving."""
    return [[100, level - 5.0], [200, level - 2.0], [300, level], [400, level + gain]]


def write_arm(
    root: Path,
    *,
    experiment: str,
    label: str,
    family: str,
    error: float,
    texts: tuple[list[str], list[str]],
    config: dict[str, Any] | None = None,
    seeds: Sequence[int] = (1, 2, 3),
    gain: float = 0.0,
    long_penalty: float = 0.0,
    spread: float = 0.02,
    scale: str = "multi30k",
    salt: int | None = None,
    **kwargs: Any,
) -> list[Path]:
    """One variant's runs, a seed each, scored with the real metrics on ``texts`` (sources,
    references): hypotheses replace each word with probability ``error`` (+ ``spread`` per
    seed away from seed 2, + ``long_penalty`` per word past 10), validations rising by
    ``gain`` over the last quarter. Lower ``error`` is a better variant; fewer sentences in
    ``texts`` make the test set noisier; variants given one ``salt`` draw the same errors
    (equal variants, where independent draws would differ by chance)."""
    sources, references = texts
    salt = sum(map(ord, label)) * 1000 if salt is None else salt
    paths = []
    for seed in seeds:
        rate = max(0.0, error + spread * (seed - 2))
        hypotheses = translate(references, rate, seed=salt + seed, long_penalty=long_penalty)
        paths.append(
            write_run(
                root / f"{label}_{seed}",
                experiment=experiment,
                variant=label,
                family=family,
                seed=seed,
                config=config,
                texts=(sources, references, hypotheses),
                scale=scale,
                validations=converging(gain),
                bleu_only=True,
                **kwargs,
            )
        )
    return paths
