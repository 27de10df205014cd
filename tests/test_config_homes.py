"""One home for each thing (issue 21): conf/ holds every configured value, the Python side none.

For every ``_target_`` under conf/ that names a ``seq2seq_lab`` class or function, and for the
classes built from a config node without a ``_target_`` (listed below), no parameter of the
constructor has a default: a key missing from the YAML is an error, never a silently different
second default. The exceptions are listed with their reason; one that no longer matches a
defaulted parameter fails as well, so the list cannot go stale.
"""

from __future__ import annotations

import inspect
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hydra.utils import get_object
from omegaconf import OmegaConf

CONF = Path(__file__).resolve().parents[1] / "conf"
PROJECT = "seq2seq_lab."

# Built from a config node that has no _target_ (the pipeline passes the node's keys).
BUILT_WITHOUT_TARGET = {
    "seq2seq_lab.training.module.Seq2SeqModule": "module: in conf/train.yaml",
    "seq2seq_lab.decoding.DecodingSettings": "conf/decoding/*.yaml",
    "seq2seq_lab.training.divergence.DivergenceRule": "module.divergence in conf/train.yaml",
    "seq2seq_lab.data.synthetic.SyntheticTask": "data.source of conf/data/synthetic.yaml",
}

# (target, parameter) -> why a default is right there.
EXCEPTIONS = {
    ("seq2seq_lab.training.module.Seq2SeqModule", "run_config"): (
        "not a setting: the whole resolved run config, recorded for eval/translate by the "
        "pipeline; a module built outside a run (tests, benchmarks) has none"
    ),
}


def _targets_in(node: Any, found: list[str]) -> None:
    if isinstance(node, dict):
        target = node.get("_target_")
        if isinstance(target, str):
            found.append(target)
        for value in node.values():
            _targets_in(value, found)
    elif isinstance(node, list):
        for value in node:
            _targets_in(value, found)


def project_targets() -> dict[str, list[str]]:
    """seq2seq_lab target -> the conf files naming it."""
    files: dict[str, list[str]] = defaultdict(list)
    for path in sorted(CONF.rglob("*.yaml")):
        found: list[str] = []
        _targets_in(OmegaConf.to_container(OmegaConf.load(path), resolve=False), found)
        for target in found:
            if target.startswith(PROJECT):
                files[target].append(str(path.relative_to(CONF)))
    return dict(files)


def defaulted(obj: Any) -> dict[str, Any]:
    """The parameters of ``obj``'s signature (a class: its constructor) that have a default."""
    return {
        name: p.default
        for name, p in inspect.signature(obj).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


TARGETS = project_targets()
CHECKED = {**{t: ", ".join(f) for t, f in TARGETS.items()}, **BUILT_WITHOUT_TARGET}


def test_the_walk_finds_the_configured_classes():
    for target in (
        "seq2seq_lab.data.datamodule.TranslationDataModule",
        "seq2seq_lab.data.sources.ParallelTextSource",
        "seq2seq_lab.data.tokenizers.SentencePieceTokenizerTrainer",
        "seq2seq_lab.optim.schedules.Noam",
        "seq2seq_lab.callbacks.diagnostics.TransformerDiagnostics",
        "seq2seq_lab.loggers.wandb_logger.make_wandb_logger",
        "seq2seq_lab.models.attention.multi_head.AttentionOptions",  # nested in model:
    ):
        assert target in TARGETS, target


def test_the_check_sees_defaults():
    class WithSecondDefault:
        def __init__(self, *, size: int, dropout: float = 0.1) -> None: ...

    def required_only(*, size: int, **rest: Any) -> None: ...

    assert defaulted(WithSecondDefault) == {"dropout": 0.1}
    assert defaulted(required_only) == {}


@pytest.mark.parametrize("target", sorted(CHECKED))
def test_no_constructor_default(target):
    obj = get_object(target)
    found = {
        name: default
        for name, default in defaulted(obj).items()
        if (target, name) not in EXCEPTIONS
    }
    assert not found, (
        f"{target} (configured in {CHECKED[target]}) has defaults {found}: move each value to "
        "the YAML and make the argument required, or list it in EXCEPTIONS with the reason"
    )


@pytest.mark.parametrize("target, name", sorted(EXCEPTIONS))
def test_every_exception_is_still_needed(target, name):
    assert target in CHECKED, f"{target} is no longer configured"
    assert name in defaulted(get_object(target)), f"{target}({name}=...) has no default now"
