"""The shared decoders on every family: beam 1 == greedy, beam search never scores worse
than greedy, length limits, and the returned attention."""

from __future__ import annotations

import hydra
import pytest
import torch
from conftest import FAMILIES, REPO
from hydra import compose, initialize_config_dir

from seq2seq_lab.decoding import DecodingSettings, beam_search, decode, greedy_search
from seq2seq_lab.decoding.hypotheses import max_output_lengths

torch.set_num_threads(1)  # tiny tensors: threads only contend on a loaded machine


def tiny_network(family: str, seed: int = 0):
    with initialize_config_dir(str(REPO / "conf"), version_base="1.3"):
        cfg = compose("train", overrides=[f"model={family}", "scale=smoke"])
    torch.manual_seed(seed)
    net = hydra.utils.instantiate(cfg.model, src_vocab_size=17, tgt_vocab_size=19, _convert_="all")
    return net.eval()


def source_batch(seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([7, 4, 9, 2])
    src = torch.zeros(4, 10, dtype=torch.long)
    for row, n in enumerate(lengths.tolist()):
        src[row, : n - 1] = torch.randint(4, 17, (n - 1,), generator=gen)
        src[row, n - 1] = 3  # EOS
    return src, src != 0


@pytest.mark.parametrize("family", FAMILIES)
def test_beam_size_one_equals_greedy(family):
    net = tiny_network(family)
    src, mask = source_batch()
    greedy = greedy_search(net, src, mask, max_len_a=1.5, max_len_b=4, min_len=0)
    # length_penalty 0: lp = 1, so beam scores are plain log-probabilities like greedy's.
    beam = beam_search(
        net, src, mask, beam_size=1, length_penalty=0.0, max_len_a=1.5, max_len_b=4, min_len=0
    )
    assert beam.tokens == greedy.tokens
    assert beam.scores == pytest.approx(greedy.scores, abs=1e-4)


@pytest.mark.parametrize("family", FAMILIES)
def test_wider_beam_finds_at_least_greedys_log_probability(family):
    net = tiny_network(family, seed=3)
    src, mask = source_batch(seed=3)
    greedy = greedy_search(net, src, mask, max_len_a=1.0, max_len_b=3, min_len=0)
    beam = beam_search(
        net, src, mask, beam_size=4, length_penalty=0.0, max_len_a=1.0, max_len_b=3, min_len=0
    )
    for b_score, g_score in zip(beam.scores, greedy.scores):
        assert b_score >= g_score - 1e-4


def test_outputs_respect_the_length_limit():
    net = tiny_network("transformer")
    src, mask = source_batch()
    limits = max_output_lengths(mask, 0.5, 1).tolist()
    for beam_size in (1, 3):
        hyps = decode(
            net, src, mask, DecodingSettings(beam_size=beam_size, max_len_a=0.5, max_len_b=1)
        )
        assert all(len(t) <= n for t, n in zip(hyps.tokens, limits))


@pytest.mark.parametrize("family", ["bahdanau", "luong"])
def test_attention_is_returned_per_emitted_step(family):
    net = tiny_network(family)
    src, mask = source_batch()
    for beam_size in (1, 3):
        hyps = decode(net, src, mask, DecodingSettings(beam_size=beam_size), return_attention=True)
        lengths = mask.sum(1).tolist()
        for tokens, attn, n in zip(hyps.tokens, hyps.attention, lengths):
            assert attn.shape[1] == n
            assert attn.shape[0] in (len(tokens), len(tokens) + 1)  # + EOS unless cut
            assert torch.allclose(attn.sum(-1), torch.ones(attn.shape[0]), atol=1e-5)


def test_min_len_forbids_early_eos():
    net = tiny_network("seq2seq")
    src, mask = source_batch()
    hyps = greedy_search(net, src, mask, min_len=3, max_len_a=0.0, max_len_b=6)
    assert all(len(t) >= 3 for t in hyps.tokens)
