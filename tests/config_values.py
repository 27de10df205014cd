"""Constructor arguments taken from the real config files, for tests that build a configured
class directly (a synthetic task, a tokenizer trainer, a source, a schedule, a callback, the
training module; networks: ``seq2seq_lab.config.build_network``).

conf/ is the one home of every configured value (issue 21): the constructors have no defaults,
and tests do not keep a second copy. Each helper composes ``train`` as
``python -m seq2seq_lab.train <overrides>`` would (default groups and scale), takes one node,
resolved and without ``_target_``, and applies only the keyword overrides a test is about; an
override naming a key the node does not have is a KeyError, so a renamed key cannot be
silently ignored.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from omegaconf import OmegaConf

from seq2seq_lab.config import compose_train
from seq2seq_lab.decoding import DecodingSettings


@cache
def _node(path: str, overrides: tuple[str, ...]) -> dict[str, Any]:
    cfg = compose_train(*overrides)
    node = OmegaConf.select(cfg, path)
    if node is None:
        raise KeyError(f"the train config composed with {list(overrides)} has no node {path}")
    values = OmegaConf.to_container(node, resolve=True)
    assert isinstance(values, dict), path
    values.pop("_target_", None)
    return values


def config_values(path: str, *overrides: str, **values: Any) -> dict[str, Any]:
    """The keyword arguments at ``path`` (e.g. ``data.tokenizer``) of the train config composed
    with the command-line ``overrides``, with ``values`` on top."""
    base = copy.deepcopy(_node(path, overrides))
    unknown = sorted(set(values) - set(base))
    if unknown:
        raise KeyError(f"{path} has no key {', '.join(unknown)} (keys: {', '.join(base)})")
    return {**base, **values}


def synthetic_settings(**overrides: Any) -> dict[str, Any]:
    """``data.source`` of conf/data/synthetic.yaml: the fields of ``SyntheticTask``."""
    return config_values("data.source", "data=synthetic", **overrides)


def source_settings(option: str, **overrides: Any) -> dict[str, Any]:
    """``data.source`` of conf/data/<option>.yaml (parallel_text, multi30k, hf, ...)."""
    return config_values("data.source", f"data={option}", **overrides)


def tokenizer_settings(kind: str, **overrides: Any) -> dict[str, Any]:
    """``data.tokenizer`` of conf/data/tokenizer/<kind>.yaml (word, bpe, unigram)."""
    return config_values("data.tokenizer", f"data/tokenizer={kind}", **overrides)


def schedule_settings(name: str, **overrides: Any) -> dict[str, Any]:
    """``schedule`` of conf/schedule/<name>.yaml (warmup_steps from the default scale)."""
    return config_values("schedule", f"schedule={name}", **overrides)


def callback_settings(name: str, **overrides: Any) -> dict[str, Any]:
    """``callbacks.<name>`` of conf/callbacks/default.yaml."""
    return config_values(f"callbacks.{name}", **overrides)


def module_settings(**overrides: Any) -> dict[str, Any]:
    """``module`` of conf/train.yaml (label smoothing, decoding, divergence...): the keyword
    arguments of ``Seq2SeqModule`` besides the network, optimiser and schedule."""
    return config_values("module", **overrides)


def decoding_settings(**overrides: Any) -> DecodingSettings:
    """``module.test_decoding`` (conf/decoding/beam.yaml) as settings, ``overrides`` on top."""
    return DecodingSettings(**config_values("module.test_decoding", **overrides))
