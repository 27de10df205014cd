"""``evaluate``: a checkpoint scored on a split (``python -m seq2seq_lab.eval``), its outputs and
scores written like a training run's test."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import lightning as L
from omegaconf import DictConfig

from seq2seq_lab.analysis.decoding_study_record import STUDY, summary_lines
from seq2seq_lab.analysis.length_probe import PROBE
from seq2seq_lab.checkpoint import load_checkpoint
from seq2seq_lab.config import to_plain
from seq2seq_lab.console import quiet_third_party
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.pipeline.building import (
    build_datamodule,
    expected_family,
    set_threads,
    with_decoding_overrides,
    write_test_outputs,
)
from seq2seq_lab.pipeline.decoding_study import run_decoding_study
from seq2seq_lab.pipeline.training import run_length_probe
from seq2seq_lab.preflight import check_eval_inputs
from seq2seq_lab.record.environment import hardware, versions
from seq2seq_lab.record.results import write_results
from seq2seq_lab.training.precision import use_full_precision_kernels

log = logging.getLogger(__name__)


def _eval_data_config(cfg: DictConfig, run_config: dict) -> dict:
    """The data config to evaluate on: a data= group chosen now, or the training run's data
    with this command's non-null data.* values (split, root...) on top."""
    given = to_plain(cfg.get("data")) or {}
    if "_target_" in given:
        return given
    if "data" not in run_config:
        raise ConfigError("the checkpoint records no data config: pass data=<name> data.root=...")
    merged = dict(run_config["data"])
    merged.update({k: v for k, v in given.items() if v is not None})
    return merged


def evaluate(cfg: DictConfig) -> dict[str, Any]:
    """Score a checkpoint on one split (data.split) with its own tokenizers; then, where asked,
    the length probe and E8's decoding study of it."""
    quiet_third_party()
    check_eval_inputs(cfg)
    set_threads(cfg)
    ckpt = load_checkpoint(cfg.ckpt_path, expected_family=expected_family(cfg))
    module = ckpt.module
    module.test_decoding = with_decoding_overrides(cfg, module.test_decoding)
    data_config = _eval_data_config(cfg, ckpt.run_config)
    datamodule = build_datamodule(data_config)
    datamodule.load_state_dict(ckpt.datamodule_state)
    datamodule.prepare_data()
    datamodule.setup("test")
    trainer = L.Trainer(
        accelerator=cfg.get("accelerator", "auto"),
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
    )
    use_full_precision_kernels(trainer.precision)
    trainer.test(module, datamodule=datamodule, verbose=True)
    out_dir = Path(cfg.paths.output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    test = write_test_outputs(out_dir, module.test_results, datamodule, data_config)
    results = {
        "status": "completed",
        "checkpoint": str(ckpt.path.resolve()),
        "family": ckpt.family,
        "sacrebleu_signature": test.pop("sacrebleu_signature"),
        "test": test,
        "versions": versions(),
        "hardware": hardware(),
    }
    print(
        f"{test['split']}: BLEU {test['bleu']:.2f}  chrF {test['chrf']:.2f}  "
        f"TER {test['ter']:.2f}  ({test['sentences']} sentences, {ckpt.family})"
    )
    if cfg.get(PROBE):  # a finished run's checkpoint on inputs longer than training
        results[PROBE] = run_length_probe(module, datamodule, list(cfg[PROBE]), out_dir)
        joins = results[PROBE]["joins"]
        print(f"{PROBE} (greedy), BLEU by pairs joined: " + "  ".join(
            f"{k}: {joins[k]['bleu']:.2f}" for k in joins))  # fmt: skip
    if cfg.get(STUDY):  # E8's study of this checkpoint, on the split just scored
        results[STUDY] = run_decoding_study(module, datamodule, to_plain(cfg[STUDY]), out_dir)
        print("\n".join(summary_lines(results[STUDY])))
    write_results(out_dir / "eval_results.json", results)
    hypotheses = out_dir / f"hypotheses.{test['split']}.txt"
    print(f"results: {out_dir / 'eval_results.json'}; hypotheses: {hypotheses}")
    return results
