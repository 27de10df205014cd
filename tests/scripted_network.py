"""A hand-scripted :class:`Seq2SeqNetwork` for exact decoding tests (a helper, not a test module).

The next-token distribution is looked up in a table written by the test, so the test decides
which tokens rank where and can compute every score by hand:

    scripts[i][prefix] = {token: probability, ...}

``i`` is the first source token of the sentence (so one batch can mix scripts and a sentence
keeps its script when decoded alone), ``prefix`` the tuple of tokens emitted so far (BOS not
included). Unlisted tokens get probability 0 (log-probability -inf), so a script can leave
fewer live continuations than a beam has room for. A prefix the script does not list gets
``fallback``. Probabilities of a row must sum to 1 (checked), so that the search's
log_softmax returns log(p) unchanged and hand-computed scores hold.

The decoder state is a :class:`BatchState` (the prefix per row, the script index static per
sentence), so beam search's ``select``/``reorder_beams`` move it like any family's state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor

from seq2seq_lab.data.specials import EOS_ID
from seq2seq_lab.models.network import Seq2SeqNetwork, StepOutput
from seq2seq_lab.models.state import BatchState

Script = dict[tuple[int, ...], dict[int, float]]

# Word ids of the scripts (0-3 are PAD, UNK, BOS, EOS)
A, B, C, D = 4, 5, 6, 7
EOS = EOS_ID
VOCAB = 8


@dataclass
class ScriptedMemory(BatchState):
    script: Tensor  # [B] index into the network's scripts


@dataclass
class ScriptedState(BatchState):
    script: Tensor = field(metadata={"static": True})  # [B]
    prefix: Tensor  # [B, t] tokens fed so far, BOS first


class ScriptedNetwork(Seq2SeqNetwork):
    """Seq2SeqNetwork whose step returns log(p) of the scripted table (module docstring)."""

    family = "scripted"

    def __init__(
        self,
        scripts: list[Script],
        *,
        fallback: dict[int, float] | None = None,
        vocab_size: int = VOCAB,
    ) -> None:
        super().__init__(
            src_vocab_size=vocab_size, tgt_vocab_size=vocab_size, teacher_forcing_ratio=1.0
        )
        for row in [fallback or {}] + [row for script in scripts for row in script.values()]:
            assert not row or math.isclose(sum(row.values()), 1.0), f"not a distribution: {row}"
        self.scripts = scripts
        self.fallback = fallback if fallback is not None else {EOS: 1.0}
        self.steps = 0  # calls of step()

    def encode(self, src: Tensor, src_mask: Tensor) -> ScriptedMemory:
        return ScriptedMemory(script=src[:, 0].clone())

    def init_state(self, memory: ScriptedMemory, max_length: int | None = None) -> ScriptedState:
        empty = torch.empty((memory.script.size(0), 0), dtype=torch.long)
        return ScriptedState(script=memory.script, prefix=empty)

    def step(self, prev_tokens: Tensor, state: ScriptedState) -> StepOutput:
        self.steps += 1
        prefix = torch.cat([state.prefix, prev_tokens.unsqueeze(1)], dim=1)  # [B, t + 1]
        logits = torch.full((prefix.size(0), self.tgt_vocab_size), float("-inf"))
        for row, (script, tokens) in enumerate(zip(state.script.tolist(), prefix.tolist())):
            emitted = tuple(tokens[1:])  # without BOS
            for token, p in self.scripts[script].get(emitted, self.fallback).items():
                logits[row, token] = math.log(p)
        return StepOutput(logits, ScriptedState(script=state.script, prefix=prefix), None)


def sources(*scripts: int, length: int = 1) -> tuple[Tensor, Tensor]:
    """src [B, length] whose first token picks each row's script; every position is real."""
    src = torch.tensor(scripts).unsqueeze(1).repeat(1, length)
    return src, torch.ones_like(src, dtype=torch.bool)


def lp(length: int, alpha: float) -> float:
    """GNMT's length penalty, written out here to check the search's against it."""
    return ((5 + length) / 6) ** alpha
