"""Training throughput of our TransformerNetwork vs a torch.nn.Transformer of the same shape.

Both models: 3+3 layers, d_model 256, 4 heads, d_ff 1024, dropout 0.1, pre-LN, sinusoidal
positions (the same table), source/target/output embeddings tied over one 8,000-type vocabulary,
Xavier-uniform init. One training step = forward, label-smoothed (0.1) cross entropy over the
real target tokens, backward, Adam (0.9, 0.98) step. Throughput = real target tokens per second.

Batches: sentence lengths are the word counts of Multi30k train (read from --lengths, nothing
is copied), token ids random, batched by the data layer's training sampler (length-bucketed,
at most --max-tokens padded tokens = sentences x longest side); its first --batches batches. Every model sees the same batches; rounds alternate the
order of the models (drifting load on a shared machine hits all of them), and the table shows
the median round.

torch.nn.Transformer gets the usual masks: source key padding (encoder and cross-attention)
and the causal target mask (``tgt_is_causal=True``). Its ``dropout`` also drops attention
weights and the FFN's hidden layer; ours drops neither by default (model.attention.dropout=0,
Vaswani et al.'s residual and embedding dropout only), so "ours, attention dropout 0.1" is timed
too for a like-for-like comparison.

    .venv/bin/python experiments/benchmarks/transformer_vs_torch.py
    .venv/bin/python experiments/benchmarks/transformer_vs_torch.py --rounds 5 --profile
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seq2seq_lab.config import build_network
from seq2seq_lab.data.batching import EncodedPair, EncodedPairs, TokenBudgetBatchSampler, collate
from seq2seq_lab.data.specials import PAD_ID
from seq2seq_lab.models.transformer.network import TransformerNetwork
from seq2seq_lab.models.transformer.positions import SinusoidalPositions

DEFAULT_LENGTHS = Path(__file__).resolve().parents[3] / "shared" / "data" / "multi30k" / "train"


class TorchTransformer(nn.Module):
    """torch.nn.Transformer with tied embeddings x sqrt(d), sinusoidal positions, output layer."""

    def __init__(self, *, vocab: int, d_model: int, heads: int, d_ff: int, layers: int,
                 dropout: float) -> None:  # fmt: skip
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.positions = SinusoidalPositions(d_model=d_model, max_positions=1024)
        self.dropout = nn.Dropout(dropout)
        self.transformer = nn.Transformer(
            d_model, heads, layers, layers, d_ff, dropout, batch_first=True, norm_first=True
        )
        self.output = nn.Linear(d_model, vocab, bias=False)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        self.output.weight = self.embed.weight
        self.scale = math.sqrt(d_model)

    def _embed(self, tokens: Tensor) -> Tensor:
        return self.dropout(self.embed(tokens) * self.scale + self.positions(0, tokens.size(1)))

    def forward(self, src: Tensor, src_mask: Tensor, tgt_in: Tensor) -> Tensor:
        causal = nn.Transformer.generate_square_subsequent_mask(
            tgt_in.size(1), device=tgt_in.device
        )
        hidden = self.transformer(
            self._embed(src),
            self._embed(tgt_in),
            tgt_mask=causal,
            src_key_padding_mask=~src_mask,
            memory_key_padding_mask=~src_mask,
            tgt_is_causal=True,
        )
        return self.output(hidden)


def read_lengths(prefix: Path, src: str, tgt: str) -> list[tuple[int, int]]:
    """(source, target) lengths in words of each line pair."""
    with open(f"{prefix}.{src}") as fs, open(f"{prefix}.{tgt}") as ft:
        return [(len(a.split()), len(b.split())) for a, b in zip(fs, ft)]


def make_batches(lengths: list[tuple[int, int]], max_tokens: int, count: int, vocab: int,
                 seed: int) -> list[tuple[Tensor, Tensor, Tensor, Tensor]]:  # fmt: skip
    """Pairs of random ids with the given lengths, batched by the training sampler of the data
    layer (length-bucketed, at most ``max_tokens`` padded tokens); its first ``count`` batches
    as (src, src_mask, tgt_in, tgt_out)."""
    generator = torch.Generator().manual_seed(seed)
    pairs = EncodedPairs([
        EncodedPair(i, torch.randint(4, vocab, (ls,), generator=generator).tolist(),
                    torch.randint(4, vocab, (lt,), generator=generator).tolist())
        for i, (ls, lt) in enumerate(lengths)
    ])  # fmt: skip
    sampler = TokenBudgetBatchSampler(src_lengths=pairs.src_lengths(),
                                      tgt_lengths=pairs.tgt_lengths(), max_tokens=max_tokens,
                                      shuffle=True, seed=seed)  # fmt: skip
    batches = [collate([pairs[i] for i in indices]) for indices in sampler.batches()[:count]]
    return [(b.src, b.src_mask, b.tgt_in, b.tgt_out) for b in batches]


def train_seconds(model: nn.Module, forward, optimizer, batches) -> float:
    """Wall time of one training step per batch, summed."""
    start = time.perf_counter()
    for src, src_mask, tgt_in, tgt_out in batches:
        logits = forward(src, src_mask, tgt_in)  # [B, T, V]
        loss = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID,
                               label_smoothing=0.1)  # fmt: skip
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=Path, default=DEFAULT_LENGTHS,
                        help="corpus prefix whose .SRC/.TGT line lengths shape the batches")  # fmt: skip
    parser.add_argument("--src", default="de")
    parser.add_argument("--tgt", default="en")
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--max-tokens", type=int, default=4096)
    parser.add_argument("--batches", type=int, default=8, help="batches per round")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per model")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true", help="profile one batch of ours")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    shape = dict(d_model=256, heads=4, d_ff=1024, dropout=0.1)
    models: dict[str, nn.Module] = {}
    for name, attention_dropout in (("ours", 0.0), ("ours, attention dropout 0.1", 0.1)):
        torch.manual_seed(args.seed)
        models[name] = build_network(
            "transformer", src_vocab_size=args.vocab, tgt_vocab_size=args.vocab,
            encoder_layers=3, decoder_layers=3, norm="pre", positions="sinusoidal",
            tie_embeddings="all", attention={"dropout": attention_dropout}, **shape,
        )  # fmt: skip
    torch.manual_seed(args.seed)
    models["torch.nn.Transformer"] = TorchTransformer(vocab=args.vocab, layers=3, **shape)
    forwards = {
        name: (lambda s, m, t, model=model: model(s, m, t).logits)
        if isinstance(model, TransformerNetwork)
        else model
        for name, model in models.items()
    }
    optimizers = {
        name: torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98))
        for name, model in models.items()
    }
    params = {name: sum(p.numel() for p in m.parameters()) for name, m in models.items()}
    batches = make_batches(read_lengths(args.lengths, args.src, args.tgt), args.max_tokens,
                           args.batches, args.vocab, args.seed)  # fmt: skip
    tokens = sum(int((b[3] != PAD_ID).sum()) for b in batches)
    padded = sum(b[2].numel() for b in batches)
    for model in models.values():
        model.train()

    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        name = "ours"
        train_seconds(models[name], forwards[name], optimizers[name], batches[:1])
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            train_seconds(models[name], forwards[name], optimizers[name], batches[:1])
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))

    names = list(models)
    for name in names:  # warm-up: first calls allocate and pick kernels
        train_seconds(models[name], forwards[name], optimizers[name], batches[:2])
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for r in range(args.rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            seconds[name].append(
                train_seconds(models[name], forwards[name], optimizers[name], batches)
            )

    print(
        f"Training throughput, {args.batches} batches x {args.rounds} rounds, {tokens} real "
        f"target tokens per round ({padded} padded), vocab {args.vocab}, torch "
        f"{torch.__version__}, {torch.get_num_threads()} threads"
    )
    median = {name: statistics.median(ts) for name, ts in seconds.items()}
    reference = median["torch.nn.Transformer"]
    print(f"  {'model':30s} {'params':>10s} {'tokens/s':>10s} {'min..max':>17s} {'vs torch':>9s}")
    for name in names:
        rates = sorted(tokens / s for s in seconds[name])
        print(
            f"  {name:30s} {params[name]:10d} {tokens / median[name]:10.0f} "
            f"{rates[0]:8.0f}..{rates[-1]:<8.0f} {reference / median[name]:8.2f}x"
        )


if __name__ == "__main__":
    main()
