"""The shared decoders on every family: beam 1 == greedy, beam search never scores worse
than greedy, each sentence decoded as if alone, length limits, and the returned attention."""

from __future__ import annotations

from dataclasses import dataclass, field

import hydra
import pytest
import torch
from config_values import decoding_settings
from conftest import FAMILIES, REPO
from hydra import compose, initialize_config_dir
from torch import Tensor

from seq2seq_lab.decoding import beam_search, decode, greedy_search
from seq2seq_lab.decoding.hypotheses import max_output_lengths
from seq2seq_lab.models.network import Seq2SeqNetwork, StepOutput
from seq2seq_lab.models.state import BatchState

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


@pytest.mark.cuda
@pytest.mark.parametrize("family", FAMILIES)
def test_beam_size_one_equals_greedy(family, device):
    net = tiny_network(family).to(device)
    src, mask = (t.to(device) for t in source_batch())
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


@dataclass
class EosAtMemory(BatchState):
    inner: BatchState
    eos_step: Tensor  # [B]


@dataclass
class EosAtState(BatchState):
    inner: BatchState
    eos_step: Tensor = field(metadata={"static": True})  # [B]: per sentence
    step: Tensor  # [B] steps taken (equal in every row)


class EosAt(Seq2SeqNetwork):
    """Wraps a network and makes EOS its most probable token at step |x| - 3 of each sentence
    (|x| the source length; never when that is negative). Untrained networks end sentences
    all at once or never; this one ends them at steps that differ between sentences while
    every other token comes from the wrapped network and its state."""

    family = "eos_at"

    def __init__(self, inner: Seq2SeqNetwork) -> None:
        super().__init__(
            src_vocab_size=inner.src_vocab_size,
            tgt_vocab_size=inner.tgt_vocab_size,
            teacher_forcing_ratio=inner.teacher_forcing_ratio,
        )
        self.inner = inner

    def encode(self, src: Tensor, src_mask: Tensor) -> EosAtMemory:
        return EosAtMemory(self.inner.encode(src, src_mask), src_mask.sum(1) - 3)

    def init_state(self, memory: EosAtMemory, max_length: int | None = None) -> EosAtState:
        steps = torch.zeros_like(memory.eos_step)
        inner = self.inner.init_state(memory.inner, max_length)
        return EosAtState(inner, memory.eos_step, steps)

    def step(self, prev_tokens: Tensor, state: EosAtState) -> StepOutput:
        out = self.inner.step(prev_tokens, state.inner)
        logits = out.logits.clone()
        force = state.step == state.eos_step  # [B]
        logits[force, self.eos_id] = logits[force].max(-1).values + 5.0
        return StepOutput(logits, EosAtState(out.state, state.eos_step, state.step + 1), None)


@pytest.mark.parametrize("beam_size", [1, 3])
@pytest.mark.parametrize("family", FAMILIES)
def test_each_sentence_is_decoded_as_if_it_were_alone(family, beam_size):
    # Rows of a batch share steps (and beam search re-indexes their state): a sentence that
    # finishes early, or a longer neighbour, must not change another sentence's output.
    net = EosAt(tiny_network(family, seed=1))
    src, mask = source_batch(seed=1)  # lengths 7, 4, 9, 2: EOS after 4, 1, 6 words, never
    settings = decoding_settings(beam_size=beam_size, max_len_a=1.0, max_len_b=4)
    batched = decode(net, src, mask, settings)
    assert [len(t) for t in batched.tokens] == [4, 1, 6, 6]  # the last one cut at its limit
    for b, n in enumerate(mask.sum(1).tolist()):
        alone = decode(net, src[b : b + 1, :n], mask[b : b + 1, :n], settings)  # no padding
        assert alone.tokens == [batched.tokens[b]], b
        assert alone.scores == pytest.approx([batched.scores[b]], abs=1e-4), b


def test_outputs_respect_the_length_limit():
    net = tiny_network("transformer")
    src, mask = source_batch()
    limits = max_output_lengths(mask, 0.5, 1).tolist()
    for beam_size in (1, 3):
        hyps = decode(
            net, src, mask, decoding_settings(beam_size=beam_size, max_len_a=0.5, max_len_b=1)
        )
        assert all(len(t) <= n for t, n in zip(hyps.tokens, limits))


@pytest.mark.parametrize("family", ["bahdanau", "luong"])
def test_attention_is_returned_per_emitted_step(family):
    net = tiny_network(family)
    src, mask = source_batch()
    for beam_size in (1, 3):
        hyps = decode(net, src, mask, decoding_settings(beam_size=beam_size), return_attention=True)
        lengths = mask.sum(1).tolist()
        for tokens, attn, n in zip(hyps.tokens, hyps.attention, lengths):
            assert attn.shape[1] == n
            assert attn.shape[0] in (len(tokens), len(tokens) + 1)  # + EOS unless cut
            assert torch.allclose(attn.sum(-1), torch.ones(attn.shape[0]), atol=1e-5)


def test_min_len_forbids_early_eos():
    net = tiny_network("plain")
    src, mask = source_batch()
    hyps = greedy_search(net, src, mask, min_len=3, max_len_a=0.0, max_len_b=6)
    assert all(len(t) >= 3 for t in hyps.tokens)
