"""Shared test helpers: compose the real Hydra configs and shrink them for the CPU.

Like the lightning-hydra-template's conftest, tests run the same configs users run, only with
tiny data and models.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, open_dict

REPO = Path(__file__).resolve().parents[1]
CONF_DIR = str(REPO / "conf")
FAMILIES = ("plain", "bahdanau", "luong", "transformer")


def tiny_overrides(family: str = "bahdanau", *extra: str) -> list[str]:
    """The smoke scale (conf/scale/smoke.yaml: tiny data and per-family tiny sizes)."""
    return [f"model={family}", "scale=smoke", *extra]


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory, cache_dir):
    """One Bahdanau smoke run made as a user types it, shared read-only by the tests of what
    the commands print and do with a trained run: its directory and the finished process."""
    run_dir = tmp_path_factory.mktemp("smoke_run") / "run"
    proc = run_cli(
        "train",
        *tiny_overrides("bahdanau", "threads=1"),
        f"hydra.run.dir={run_dir}",
        f"paths.cache_dir={cache_dir}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return run_dir, proc


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models gain nothing from a second thread, and on a loaded machine threads wait on
    each other: a module that uses this (``pytestmark = pytest.mark.usefixtures("one_thread")``)
    runs single-threaded, and the setting is restored after it."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="session")  # session: module-scoped fixtures (trained models) take it too
def device() -> str:
    """The device "cuda" where torch finds a GPU, else "cpu": the tests marked ``cuda`` (the equivalences
    a GPU could break: cached == full decoding, beam 1 == greedy, batch invariance, every
    family's fast_dev_run, bf16-mixed steps, the checkpoint round trip) take it, so that
    ``pytest -m cuda`` on a lent GPU (experiments/gpu/check.sh) runs them there, and the
    same tests keep running on the CPU everywhere else."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def accelerator_override(device: str) -> str:
    """The trainer override that puts a run through the configs on ``device``."""
    return f"trainer.accelerator={'gpu' if device == 'cuda' else 'cpu'}"


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
