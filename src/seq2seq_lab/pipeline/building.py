"""The parts every task builds from a composed config: the data module, the Lightning module
(fresh or from a checkpoint's run config), callbacks, threads, the decoding a task overrides,
and the test outputs a run writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import Timer
from omegaconf import DictConfig

from seq2seq_lab.checkpoint import family_of
from seq2seq_lab.config import instantiate, to_plain
from seq2seq_lab.data import test_set
from seq2seq_lab.decoding import DecodingSettings
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.record.atomic import write_text
from seq2seq_lab.record.run_dir import is_rank_zero
from seq2seq_lab.training.module import Seq2SeqModule


def build_datamodule(data_config: Any) -> L.LightningDataModule:
    return instantiate(data_config, key="data")


def build_module(cfg: DictConfig, datamodule: Any) -> Seq2SeqModule:
    """The shared Lightning module around ``cfg.model``; vocabulary sizes come from the data."""
    network = to_plain(cfg.model)
    if network.get("tie_embeddings") == "all" and not datamodule.shared_vocab:
        raise ConfigError(
            "model.tie_embeddings=all needs one joint source/target vocabulary, but data "
            f"'{datamodule.source.name}' builds separate ones (use a joint tokenizer)"
        )
    network["src_vocab_size"] = datamodule.src_vocab_size
    network["tgt_vocab_size"] = datamodule.tgt_vocab_size
    return Seq2SeqModule(
        network=network,
        optimizer=to_plain(cfg.optim),
        schedule=to_plain(cfg.schedule),
        **to_plain(cfg.module),
        run_config=checkpoint_run_config(cfg),
    )


def checkpoint_run_config(cfg: DictConfig) -> dict[str, Any]:
    """The run config kept in checkpoints: the resolved config with ``data.root`` made
    absolute, so that eval and translate find the data from any working directory
    (results.json names its paths portably instead: ``seq2seq_lab.record.portable_paths``)."""
    run_config = to_plain(cfg)
    data = run_config.get("data") or {}
    if data.get("root") is not None:
        data["root"] = str(Path(data["root"]).expanduser().resolve())
    return run_config


def build_callbacks(cfg: DictConfig) -> list[L.Callback]:
    callbacks = [
        instantiate(conf, key=f"callbacks.{name}")
        for name, conf in (cfg.get("callbacks") or {}).items()
        if conf is not None and "_target_" in conf
    ]
    if cfg.trainer.get("max_time") is None:
        # Lightning adds its Timer only for max_time (and ignores max_time if one is already
        # there); every run needs one, as its state in last.ckpt times a continued run
        callbacks.append(Timer())
    return callbacks


def write_test_outputs(
    out_dir: Path,
    test_results: dict[str, Any],
    datamodule: Any = None,
    data_config: Any = None,
) -> dict[str, Any]:
    """Write hypotheses.<split>.txt (corpus order, one per line; the report's across-seed tests
    and length buckets read them) and what the run scored them against, and return the scores.
    The sources and references are named in test_set.json: by file, line range and sha256
    where ``datamodule`` read them from files the repository can name, by ``data_config`` (the
    run's ``cfg.data``) where its source generates them (the synthetic task); else copied into
    sources/references.<split>.txt (``seq2seq_lab.data.test_set``). Written atomically, and by
    global rank zero only (every DDP rank scores the whole split)."""
    test = dict(test_results)
    lines = {kind: test.pop(kind) for kind in ("hypotheses", "references", "sources")}
    if not is_rank_zero():
        return test
    split = test["split"]
    scored_on = test_set.record(
        datamodule, split, lines["sources"], lines["references"],
        to_plain(data_config),
    )  # fmt: skip
    if scored_on is not None:
        write_text(out_dir / test_set.TEST_SET_FILE, test_set.dumps(scored_on))
    for kind in ("hypotheses", *(test_set.KINDS if scored_on is None else ())):
        write_text(out_dir / f"{kind}.{split}.txt", "".join(x + "\n" for x in lines[kind]))
    return test


def set_threads(cfg: DictConfig) -> None:
    if cfg.get("threads"):
        torch.set_num_threads(int(cfg.threads))


def is_multirun() -> bool:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def expected_family(cfg: DictConfig) -> str | None:
    model = to_plain(cfg.get("model")) or {}
    return family_of(model) if "_target_" in model else None


def with_decoding_overrides(cfg: DictConfig, settings: DecodingSettings) -> DecodingSettings:
    """The checkpoint's test decoding with this command's non-null ``decoding.*`` on top."""
    return settings.replace(**(to_plain(cfg.get("decoding")) or {}))
