"""DecodingSettings: config dicts in and out, errors that name the key, and decode() dispatch."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
from config_values import decoding_settings
from conftest import CONF_DIR, compose_config
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf
from scripted_network import EOS, A, B, ScriptedNetwork, sources

from seq2seq_lab.checkpoint import _upgraded
from seq2seq_lab.decoding import DecodingSettings, decode, greedy_search, search
from seq2seq_lab.errors import ConfigError

SCALES = sorted(p.stem for p in (Path(CONF_DIR) / "scale").glob("*.yaml"))


def test_from_config_names_an_unknown_key_and_the_valid_ones():
    with pytest.raises(ConfigError, match=r"^module\.test_decoding\.beam: .*expected one of "
                       r"beam_size, length_penalty, max_len_a, max_len_b, min_len$"):  # fmt: skip
        DecodingSettings.from_config({"beam": 5}, "module.test_decoding")


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(DecodingSettings)])
def test_from_config_requires_every_setting(name):
    """No default hides here: a setting the config (conf/decoding/) lacks is an error."""
    values = decoding_settings().to_dict()
    del values[name]
    with pytest.raises(ConfigError, match=rf"^module\.val_decoding\.{name} is missing"):
        DecodingSettings.from_config(values, "module.val_decoding")


def test_a_checkpoint_from_before_every_setting_was_recorded_decodes_as_it_did():
    old = {"beam_size": 5, "max_len_a": 1.5, "max_len_b": 10}  # what such a checkpoint holds
    upgraded = _upgraded({"test_decoding": old, "val_decoding": old})
    for key in ("val_decoding", "test_decoding"):
        loaded = DecodingSettings.from_config(upgraded[key], f"module.{key}")
        assert loaded.length_penalty == 1.0 and loaded.min_len == 0  # that code's values


@pytest.mark.parametrize(
    "name,value",
    [
        ("beam_size", 0),
        ("beam_size", 2.0),
        ("beam_size", True),
        ("length_penalty", math.nan),
        ("length_penalty", "1.0"),
        ("max_len_a", -0.5),
        ("max_len_b", -1),
        ("max_len_b", 10.5),
        ("min_len", -1),
    ],
)
def test_invalid_values_raise_a_config_error_naming_the_key(name, value):
    values = {**decoding_settings().to_dict(), name: value}
    with pytest.raises(ConfigError, match=rf"^module\.test_decoding\.{name} must be .*got "):
        DecodingSettings.from_config(values, "module.test_decoding")
    with pytest.raises(ConfigError, match=rf"^decoding\.{name} must be "):
        DecodingSettings(**values)  # constructed directly (eval/translate overrides)
    with pytest.raises(ConfigError, match=rf"^decoding\.{name} must be "):
        decoding_settings().replace(**{name: value})


def test_settings_round_trip_through_a_plain_dict():
    settings = DecodingSettings(beam_size=4, length_penalty=0.6, max_len_a=1.2, max_len_b=7,
                                min_len=2)  # fmt: skip
    stored = settings.to_dict()
    assert stored == dataclasses.asdict(settings) and type(stored) is dict
    assert DecodingSettings.from_config(stored, "module.test_decoding") == settings


def test_replace_applies_values_and_keeps_the_settings_given_null():
    given = decoding_settings(beam_size=5, length_penalty=0.6)
    assert given.replace(beam_size=None, length_penalty=None) == given
    assert given.replace(beam_size=2, min_len=None) == decoding_settings(
        beam_size=2, length_penalty=0.6
    )
    with pytest.raises(ConfigError, match=r"^decoding\.beams: .*expected one of"):
        given.replace(beams=2)


@pytest.mark.parametrize("scale", SCALES)
def test_every_scale_s_decoding_sections_build_settings(scale, tmp_path):
    cfg = compose_config("train", [f"scale={scale}"], tmp_path)
    for key in ("val_decoding", "test_decoding"):
        settings = DecodingSettings.from_config(cfg.module[key], f"module.{key}")
        for name, value in cfg.module[key].items():
            assert getattr(settings, name) == value, (key, name)


@pytest.mark.parametrize("entry", ["eval", "translate"])
def test_eval_and_translate_decoding_overrides_name_settings_and_default_to_none(entry):
    GlobalHydra.instance().clear()
    with initialize_config_dir(CONF_DIR, version_base="1.3"):
        cfg = compose(entry)
    overrides = OmegaConf.to_container(cfg.decoding)
    given = decoding_settings(beam_size=5, length_penalty=0.6, max_len_b=3, min_len=1)
    assert given.replace(**overrides) == given  # every name known, nothing overridden


# decode() dispatch, on a script where greedy's score (a plain log-probability) differs from
# a 1-hypothesis beam's (divided by lp): greedy emits A then EOS, log(0.6 * 0.6).
SCRIPT = {(): {A: 0.6, EOS: 0.4}, (A,): {EOS: 0.6, B: 0.4}, (A, B): {EOS: 1.0}}


def test_decode_runs_greedy_search_for_beam_size_one():
    net = ScriptedNetwork([SCRIPT])
    src, mask = sources(0)
    one = decoding_settings(beam_size=1, length_penalty=1.0)
    hyps = decode(net, src, mask, one)
    greedy = greedy_search(net, src, mask, max_len_a=one.max_len_a,
                           max_len_b=one.max_len_b, min_len=one.min_len)  # fmt: skip
    assert hyps == greedy
    assert hyps.tokens == [[A]]
    assert hyps.scores == pytest.approx([math.log(0.6 * 0.6)], rel=1e-6)  # not / lp(2)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_decode_passes_every_setting_on(beam_size, monkeypatch):
    calls = []
    monkeypatch.setattr(search, "greedy_search", lambda *args, **kwargs: calls.append(kwargs))
    monkeypatch.setattr(search, "beam_search", lambda *args, **kwargs: calls.append(kwargs))
    settings = DecodingSettings(beam_size=beam_size, length_penalty=0.6, max_len_a=1.2,
                                max_len_b=7, min_len=2)  # fmt: skip
    decode(ScriptedNetwork([SCRIPT]), *sources(0), settings, return_attention=True)
    expected = {**settings.to_dict(), "return_attention": True}
    if beam_size == 1:  # greedy has no beam, and length_penalty ranks nothing
        del expected["beam_size"], expected["length_penalty"]
    assert calls == [expected]
