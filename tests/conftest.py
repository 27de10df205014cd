"""Shared test helpers: compose the real Hydra configs and shrink them for the CPU.

Like the lightning-hydra-template's conftest, tests run the same configs users run, only with
tiny data and models.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf, open_dict

REPO = Path(__file__).resolve().parents[1]
CONF_DIR = str(REPO / "conf")
FAMILIES = ("seq2seq", "bahdanau", "luong", "transformer")

QUIET = ["~callbacks.progress_bar"]


def tiny_overrides(family: str = "bahdanau", *extra: str) -> list[str]:
    """The smoke scale (conf/scale/smoke.yaml: tiny data and per-family tiny sizes)."""
    return [f"model={family}", "scale=smoke", *QUIET, *extra]


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def _offline_wandb(monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")


def compose_config(
    name: str, overrides: list[str], output_dir: Path, cache_dir: Path | None = None
) -> DictConfig:
    """The composed config as ``python -m seq2seq_lab.<name>`` would see it, run dir set."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(CONF_DIR, version_base="1.3"):
        cfg = compose(name, overrides=overrides, return_hydra_config=True)
    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):
        cfg.paths.output_dir = str(output_dir)
        if cache_dir is not None:
            cfg.paths.cache_dir = str(cache_dir)
        del cfg.hydra
    return cfg


def run_cli(module: str, *args: str, cwd: Path = REPO, stdin: str | None = None, timeout=600):
    """Run ``python -m seq2seq_lab.<module> args`` as a user would."""
    import subprocess
    import sys

    env = {**os.environ, "WANDB_MODE": "offline", "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", f"seq2seq_lab.{module}", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@functools.cache
def _train_config(*overrides: str) -> dict:
    GlobalHydra.instance().clear()
    with initialize_config_dir(CONF_DIR, version_base="1.3"):
        return OmegaConf.to_container(compose("train", overrides=list(overrides)))


def model_config(family: str, **options: Any) -> dict:
    """``cfg.model`` of ``model=<family>`` (the family's own sizes) as a plain dict, with
    ``options`` merged in key by key (``attention={"score": "dot"}`` keeps the other keys):
    tests take every value they do not vary from the one home, conf/model/."""
    merged = OmegaConf.merge(_train_config(f"model={family}")["model"], options)
    return OmegaConf.to_container(merged)


def build_network(family: str, *, src_vocab_size: int, tgt_vocab_size: int, **options: Any):
    """The family's network from its config, ``options`` merged in (see ``model_config``)."""
    config = model_config(family, **options)
    return network_from_config(config, src_vocab_size=src_vocab_size, tgt_vocab_size=tgt_vocab_size)


def network_from_config(config: dict, **sizes: int):
    """``config``'s class called directly (a constructor's own error is raised as is, not
    wrapped by Hydra); a nested ``attention._target_`` (the Transformer's) is built first."""
    import hydra.utils

    options = dict(config)
    network_class = hydra.utils.get_class(options.pop("_target_"))
    attention = options.get("attention")
    if isinstance(attention, dict) and "_target_" in attention:
        options["attention"] = hydra.utils.instantiate(attention)
    return network_class(**options, **sizes)


def module_settings(**options: Any) -> dict:
    """``cfg.module`` (label smoothing, decoding, divergence...) as Seq2SeqModule's keyword
    arguments, ``options`` merged in."""
    return OmegaConf.to_container(OmegaConf.merge(_train_config()["module"], options))
