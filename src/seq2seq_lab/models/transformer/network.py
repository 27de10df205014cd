"""The encoder-decoder Transformer (Vaswani et al. 2017, arXiv 1706.03762), family "transformer".

Shapes: B batch, S source length, T target length, D model width, H heads, V vocabulary.

    x_0   = Dropout(Embed(tokens) * sqrt(D) + PE(positions))     (PE absent for relative | none)
    x_l   = Block_l(x_{l-1})                                     l = 1 .. N
    out   = LayerNorm(x_N) under pre-LN, x_N under post-LN
    logits = out W_out   (W_out may be the target embedding matrix: ``tie_embeddings``)

Training (``teacher_forced``) runs the whole shifted target at once under a causal mask through
the fused attention kernel. Inference goes through the incremental contract of ``network.py``:
with ``kv_cache`` each step feeds one token and writes one position, in place, into every
layer's self-attention key/value cache (buffers preallocated for ``init_state``'s
``max_length``), and the cross-attention keys/values are projected once per sentence in
``init_state``; without it each step reruns the decoder over the whole prefix.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from typing import NamedTuple

import torch
from torch import Tensor, nn

from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.attention.multi_head import AttentionOptions, KeyValue, KeyValueCache
from seq2seq_lab.models.network import ForwardOutput, Seq2SeqNetwork, StepOutput
from seq2seq_lab.models.state import BatchState
from seq2seq_lab.models.transformer.blocks import DecoderBlock, EncoderBlock
from seq2seq_lab.models.transformer.positions import (
    ABSOLUTE_POSITIONS,
    AbsolutePositions,
    LearnedPositions,
)
from seq2seq_lab.models.transformer.state import (
    CachedDecoderState,
    PrefixDecoderState,
    TransformerMemory,
)
from seq2seq_lab.models.transformer.sublayers import residual_class

POSITIONS = ("sinusoidal", "learned", "relative", "none")
INITS = ("paper", "xavier")
TIE_EMBEDDINGS = ("none", "decoder", "all")


@dataclasses.dataclass
class TransformerTrace:
    """Everything the diagnostics look at, from one teacher-forced pass (``network.trace``).

    States are block outputs (before a pre-LN stack's final LayerNorm); weights are per head.
    """

    encoder_states: list[Tensor]  # per encoder block, [B, S, D]
    decoder_states: list[Tensor]  # per decoder block, [B, T, D]
    encoder_self: list[Tensor]  # per encoder block, [B, H, S, S]
    decoder_self: list[Tensor]  # per decoder block, [B, H, T, T]
    decoder_cross: list[Tensor]  # per decoder block, [B, H, T, S]


class _DecoderOutput(NamedTuple):
    hidden: Tensor  # [B, T, D] after the final LayerNorm (pre-LN)
    cache: list[KeyValueCache] | None  # per layer self-attention caches (incremental step)
    attention: Tensor | None  # [B, T, S] last layer's head-averaged cross-attention


class TransformerNetwork(Seq2SeqNetwork):
    """Encoder-decoder Transformer with post-LN or pre-LN blocks (``model=transformer``).

    Args (all keyword-only, no defaults: their one home is ``conf/model/transformer.yaml``,
    the config keys are ``model.<name>``):
        d_model, heads, d_ff: widths (d_k = d_v = d_model / heads).
        encoder_layers, decoder_layers: N of each stack.
        dropout: residual and embedding dropout.
        norm: ``post`` (LayerNorm(x + Dropout(SubLayer(x)))) or ``pre``
            (x + Dropout(SubLayer(LayerNorm(x))), plus a final LayerNorm after each stack).
        positions: ``sinusoidal`` | ``learned`` absolute positions added to the embeddings,
            ``relative`` (Shaw et al. 2018, in every self-attention, clipped at
            ``max_relative_position``) or ``none``.
        max_positions: size of the absolute tables; longer sequences raise a ConfigError.
        ffn_activation: ``relu`` | ``silu`` | ``gelu``.
        tie_embeddings: ``none``; ``decoder`` (target embeddings = output projection);
            ``all`` (source embeddings too; needs one joint vocabulary).
        attention: ``scale`` (divide by sqrt(d_k)) and attention-weight ``dropout``.
        init: the initialisation scheme (:meth:`_reset_parameters`): ``paper`` or ``xavier``.
        kv_cache: incremental decoding with key/value caches (False reruns the whole prefix).

    ``step`` returns the last decoder layer's cross-attention averaged over its heads: the layer
    closest to the output, and one [B, S] distribution per step, as for the recurrent families.
    """

    family = "transformer"

    def __init__(
        self,
        *,
        src_vocab_size: int,
        tgt_vocab_size: int,
        d_model: int,
        heads: int,
        d_ff: int,
        encoder_layers: int,
        decoder_layers: int,
        dropout: float,
        norm: str,
        positions: str,
        max_positions: int,
        max_relative_position: int,
        ffn_activation: str,
        tie_embeddings: str,
        attention: AttentionOptions,
        init: str,
        kv_cache: bool,
        teacher_forcing_ratio: float,
    ) -> None:
        super().__init__(
            src_vocab_size=src_vocab_size,
            tgt_vocab_size=tgt_vocab_size,
            teacher_forcing_ratio=teacher_forcing_ratio,
        )
        if positions not in POSITIONS:
            raise ConfigError(f"model.positions={positions!r} must be one of {'|'.join(POSITIONS)}")
        if init not in INITS:
            raise ConfigError(f"model.init={init!r} must be one of {'|'.join(INITS)}")
        if tie_embeddings not in TIE_EMBEDDINGS:
            raise ConfigError(
                f"model.tie_embeddings={tie_embeddings!r} must be one of {'|'.join(TIE_EMBEDDINGS)}"
            )
        if tie_embeddings == "all" and src_vocab_size != tgt_vocab_size:
            raise ConfigError(
                f"model.tie_embeddings=all needs one joint vocabulary, but the source has "
                f"{src_vocab_size} types and the target {tgt_vocab_size}"
            )
        if encoder_layers < 1 or decoder_layers < 1:
            raise ConfigError(
                f"model.encoder_layers={encoder_layers} and model.decoder_layers="
                f"{decoder_layers} must both be at least 1"
            )
        self.d_model, self.heads = d_model, heads
        self.norm, self.positions, self.init = norm, positions, init
        self.kv_cache = kv_cache
        residual = residual_class(norm)
        block_args = dict(
            d_model=d_model,
            heads=heads,
            d_ff=d_ff,
            dropout=dropout,
            residual=residual,
            ffn_activation=ffn_activation,
            attention=attention,
            max_relative_position=max_relative_position if positions == "relative" else None,
        )
        self.encoder = nn.ModuleList(EncoderBlock(**block_args) for _ in range(encoder_layers))
        self.decoder = nn.ModuleList(DecoderBlock(**block_args) for _ in range(decoder_layers))
        # pre-LN leaves the residual stream unnormalised: one LayerNorm closes each stack
        self.encoder_norm = nn.LayerNorm(d_model) if residual.final_norm else None
        self.decoder_norm = nn.LayerNorm(d_model) if residual.final_norm else None

        self.src_embed = nn.Embedding(src_vocab_size, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, d_model)
        self.output = nn.Linear(d_model, tgt_vocab_size, bias=False)
        self.embed_scale = math.sqrt(d_model)
        self.src_positions: AbsolutePositions | None = None
        self.tgt_positions: AbsolutePositions | None = None
        if positions in ABSOLUTE_POSITIONS:
            table = ABSOLUTE_POSITIONS[positions]
            options = {"d_model": d_model, "max_positions": max_positions}
            if positions == "learned":
                # under the paper's scheme a learned table enters as the tokens do: x sqrt(D)
                options["scale"] = self.embed_scale if init == "paper" else 1.0
            self.src_positions = table(**options)
            self.tgt_positions = table(**options)
        self.embed_dropout = nn.Dropout(dropout)
        self._reset_parameters()
        if tie_embeddings in ("decoder", "all"):
            self.output.weight = self.tgt_embed.weight
        if tie_embeddings == "all":
            self.src_embed.weight = self.tgt_embed.weight

    def _reset_parameters(self) -> None:
        """The initialisation scheme ``init``, a named choice:

        - ``xavier``: Xavier-uniform for every matrix, embedding tables and learned position
          tables included, zero biases, LayerNorm gains 1. With a large vocabulary the token
          signal E x sqrt(D) then starts far below the sinusoidal table's rms sqrt(1/2):
          Xavier's rms sqrt(2 / (V + D)) times sqrt(D) is 0.18 at V 8000, D 128.
        - ``paper``: as ``xavier``, then the token embeddings E ~ N(0, D^-1/2) (tensor2tensor,
          fairseq), so E x sqrt(D) starts at rms 1, beside the sinusoidal table's 0.71;
          a learned position table likewise W ~ N(0, D^-1/2), entering as sqrt(D) W
          (positions.py). fairseq adds its learned table N(0, D^-1/2) unscaled, 1/sqrt(D) of
          the tokens; here positions and tokens start at the same size, and an Adam step (about
          lr on each entry of W) changes both by the same share (a design reason, not a
          measurement).
        """
        for name, p in self.named_parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
            elif name.endswith("bias"):
                nn.init.zeros_(p)
        if self.init == "paper":
            tables = [self.src_embed.weight, self.tgt_embed.weight]
            for positions in (self.src_positions, self.tgt_positions):
                if isinstance(positions, LearnedPositions):
                    tables.append(positions.weight)
            for table in tables:
                nn.init.normal_(table, mean=0.0, std=self.d_model**-0.5)

    # ----------------------------------------------------------------------------- encoder

    def _embed(
        self, embed: nn.Embedding, positions: AbsolutePositions | None, tokens: Tensor, start: int
    ) -> Tensor:
        """tokens [B, N] at positions start .. start + N - 1 -> [B, N, D]."""
        x = embed(tokens) * self.embed_scale
        if positions is not None:
            x = x + positions(start, tokens.size(1))  # [N, D] broadcast over the batch
        return self.embed_dropout(x)

    def _encode(self, src: Tensor, src_mask: Tensor, trace: TransformerTrace | None) -> Tensor:
        x = self._embed(self.src_embed, self.src_positions, src, start=0)
        for block in self.encoder:
            x, weights = block(x, src_mask, need_weights=trace is not None)
            if trace is not None:
                trace.encoder_states.append(x)
                trace.encoder_self.append(weights)
        return x if self.encoder_norm is None else self.encoder_norm(x)

    def encode(self, src: Tensor, src_mask: Tensor) -> TransformerMemory:
        return TransformerMemory(states=self._encode(src, src_mask, None), src_mask=src_mask)

    # ----------------------------------------------------------------------------- decoder

    def _cross_keys_values(self, memory: TransformerMemory) -> list[KeyValue]:
        """Every decoder layer's cross-attention keys/values of the encoder output."""
        return [block.cross_attn.project_kv(memory.states) for block in self.decoder]

    def _decode(
        self,
        tokens: Tensor,
        cross: list[KeyValue],
        src_mask: Tensor,
        *,
        past: list[KeyValueCache] | None,
        need_attention: bool,
        trace: TransformerTrace | None = None,
    ) -> _DecoderOutput:
        """tokens [B, T] from position 0 (``past`` None), or the one token [B, 1] at position
        ``past[0].length`` (incremental step, which writes it into every layer's cache)."""
        start = 0 if past is None else past[0].length
        x = self._embed(self.tgt_embed, self.tgt_positions, tokens, start=start)
        cache: list[KeyValueCache] = []
        last = len(self.decoder) - 1
        for i, block in enumerate(self.decoder):
            out = block(
                x,
                cross[i],
                src_mask,
                past=None if past is None else past[i],
                need_weights=trace is not None or (need_attention and i == last),
            )
            x = out.x
            if out.cache is not None:
                cache.append(out.cache)
            if trace is not None:
                trace.decoder_states.append(x)
                trace.decoder_self.append(out.self_weights)
                trace.decoder_cross.append(out.cross_weights)
        hidden = x if self.decoder_norm is None else self.decoder_norm(x)
        attention = out.cross_weights.mean(dim=1) if need_attention else None  # over heads
        return _DecoderOutput(hidden, None if past is None else cache, attention)

    def teacher_forced(self, src: Tensor, src_mask: Tensor, tgt_in: Tensor) -> ForwardOutput:
        """Logits [B, T, V] for the whole shifted target at once; no attention weights are
        materialised (fused kernel), so ``attention`` is None: use :meth:`trace` for them."""
        memory = self.encode(src, src_mask)
        out = self._decode(
            tgt_in, self._cross_keys_values(memory), src_mask, past=None, need_attention=False
        )
        return ForwardOutput(self.output(out.hidden), None)

    def init_state(
        self, memory: BatchState, max_length: int | None = None
    ) -> CachedDecoderState | PrefixDecoderState:
        """With ``kv_cache``, every layer's self-attention cache is sized for ``max_length``
        positions (allocated by the first step, after beam search has expanded the batch);
        None or too short a length makes the caches grow by doubling instead."""
        assert isinstance(memory, TransformerMemory), "memory must come from this network"
        if not self.kv_cache:
            batch = memory.src_mask.size(0)
            empty = torch.empty(batch, 0, dtype=torch.long, device=memory.src_mask.device)
            return PrefixDecoderState(memory=memory, prefix=empty)
        return CachedDecoderState(
            src_mask=memory.src_mask,
            cross=self._cross_keys_values(memory),
            cache=[KeyValueCache.reserve(max_length or 0) for _ in self.decoder],
        )

    def step(self, prev_tokens: Tensor, state: BatchState) -> StepOutput:
        out, new_state = (
            self._cached_step(prev_tokens, state)
            if self.kv_cache
            else self._prefix_step(prev_tokens, state)
        )
        assert out.attention is not None
        # only the newest position predicts the next token
        return StepOutput(self.output(out.hidden[:, -1]), new_state, out.attention[:, -1])

    def _cached_step(
        self, prev_tokens: Tensor, state: CachedDecoderState
    ) -> tuple[_DecoderOutput, CachedDecoderState]:
        """Feed one token [B] at position t; every layer writes it into its cache."""
        out = self._decode(
            prev_tokens[:, None],  # [B] -> [B, 1]
            state.cross,
            state.src_mask,
            past=state.cache,
            need_attention=True,
        )
        assert out.cache is not None
        return out, dataclasses.replace(state, cache=out.cache)

    def _prefix_step(
        self, prev_tokens: Tensor, state: PrefixDecoderState
    ) -> tuple[_DecoderOutput, PrefixDecoderState]:
        """Append the token [B] to the prefix and rerun the whole decoder over it."""
        prefix = torch.cat([state.prefix, prev_tokens[:, None]], dim=1)  # [B, t + 1]
        memory = state.memory
        out = self._decode(
            prefix,
            self._cross_keys_values(memory),
            memory.src_mask,
            past=None,
            need_attention=True,
        )
        return out, dataclasses.replace(state, prefix=prefix)

    # ----------------------------------------------------------------------------- diagnostics

    def named_blocks(self) -> Iterator[tuple[str, nn.Module]]:
        """("encoder.0", block), ..., ("decoder.N-1", block): the units the diagnostics report
        on; each block has ``named_sublayers()``."""
        for i, block in enumerate(self.encoder):
            yield f"encoder.{i}", block
        for i, block in enumerate(self.decoder):
            yield f"decoder.{i}", block

    def trace(self, src: Tensor, src_mask: Tensor, tgt_in: Tensor) -> TransformerTrace:
        """One teacher-forced pass that records every block's output and attention weights."""
        trace = TransformerTrace([], [], [], [], [])
        memory = TransformerMemory(states=self._encode(src, src_mask, trace), src_mask=src_mask)
        self._decode(
            tgt_in,
            self._cross_keys_values(memory),
            src_mask,
            past=None,
            need_attention=False,
            trace=trace,
        )
        return trace
