"""Position-table statistics: the sinusoidal table's closed forms, a learned table set by hand,
no table for relative positions, and the command on a saved checkpoint."""

from __future__ import annotations

import math

import pytest
import torch
from config_values import module_settings

from experiments.e6_positions_heads.position_tables import FAR, main, table_statistics
from seq2seq_lab.checkpoint import DATAMODULE_KEY
from seq2seq_lab.config import build_network, model_config
from seq2seq_lab.training.module import Seq2SeqModule

D = 16
SIZES = dict(src_vocab_size=11, tgt_vocab_size=13, d_model=D, heads=2, d_ff=32,
             encoder_layers=1, decoder_layers=1)  # fmt: skip


def test_sinusoidal_table_matches_its_closed_forms() -> None:
    network = build_network("transformer", positions="sinusoidal", **SIZES)
    source, target = table_statistics(network, rows=30)
    frequencies = [10000 ** (-2 * i / D) for i in range(D // 2)]
    for s in (source, target):
        assert s.rows == 30
        assert s.position_rms == pytest.approx(math.sqrt(0.5), rel=1e-5)
        assert s.cos_next == pytest.approx(2 / D * sum(math.cos(w) for w in frequencies), abs=1e-5)
        assert s.cos_far == pytest.approx(
            2 / D * sum(math.cos(FAR * w) for w in frequencies), abs=1e-5
        )
    assert (source.side, target.side) == ("source", "target")


@pytest.mark.parametrize("init, scale", [("xavier", 1.0), ("paper", math.sqrt(D))])
def test_learned_table_and_token_scale_set_by_hand(init, scale) -> None:
    """The statistics read the table as it enters the network: under init=paper the learned
    table is multiplied by sqrt(D), as the tokens are."""
    network = build_network("transformer", positions="learned", init=init, **SIZES)
    with torch.no_grad():
        table = network.src_positions.weight
        table.zero_()
        table[:, 0] = 0.5  # every row the same direction: cos 1 at any distance
        table[::2, 1] = 0.5  # even rows turn 45 degrees: cos(next) = sqrt(1/2)
        network.src_embed.weight.fill_(0.25)
    source = table_statistics(network, rows=20)[0]
    assert source.position_rms == pytest.approx(
        scale * math.sqrt((20 * 0.25 + 10 * 0.25) / (20 * D))
    )
    assert source.token_rms == pytest.approx(0.25 * math.sqrt(D))
    assert source.ratio == pytest.approx(source.position_rms / source.token_rms)
    assert source.cos_next == pytest.approx(math.sqrt(0.5))
    assert source.cos_far == pytest.approx((FAR % 2 == 0) * 1.0 + (FAR % 2) * math.sqrt(0.5))


def test_relative_positions_have_no_table_and_few_rows_are_refused() -> None:
    relative = build_network("transformer", positions="relative", max_relative_position=4, **SIZES)
    assert table_statistics(relative, rows=20) == []
    with pytest.raises(ValueError, match=rf"rows=5: need more than {FAR} rows"):
        table_statistics(build_network("transformer", **SIZES), rows=5)


def test_command_reads_checkpoints_and_names_a_bad_one(tmp_path, capsys) -> None:
    module = Seq2SeqModule(
        network={**model_config("transformer", positions="learned"), **SIZES},
        optimizer={"_target_": "torch.optim.Adam", "lr": 1e-3},
        schedule={"_target_": "seq2seq_lab.optim.schedules.Constant"},
        **module_settings(),
    )
    path = tmp_path / "best.ckpt"
    torch.save(
        {"hyper_parameters": dict(module.hparams), "state_dict": module.state_dict(),
         DATAMODULE_KEY: {}},
        path,
    )  # fmt: skip
    assert main([str(path), "--rows", "12"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("checkpoint | side | position rms")
    assert [line.split(" | ")[1] for line in lines[1:]] == ["source", "target"]
    expected = table_statistics(module.network, rows=12)[0].position_rms
    assert float(lines[1].split(" | ")[2]) == pytest.approx(expected, abs=5e-4)
    assert main([str(tmp_path / "missing.ckpt")]) == 2
    assert "missing.ckpt: no such checkpoint file" in capsys.readouterr().err
