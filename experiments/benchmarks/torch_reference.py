"""Plain-PyTorch reference: a torch.nn.Transformer trained on Multi30k by a hand-written loop.

The yardstick for "what the framework costs or saves" (issue 7, ../shared/bench/README.md):
the same data, tokenisation and batches as ours (our TranslationDataModule is used only to read
and tokenise the text, so that batches are identical), the same shape (3+3, d_model 256,
4 heads, ff 1024, dropout 0.1, pre-LN, tied source/target/output embeddings) and the same
hyper-parameters; everything else is plain torch: nn.Transformer, a for loop, Adam, a
LambdaLR, clip_grad_norm_, and a greedy decoder without a KV cache (the whole prefix is rerun
at every step, as a plain nn.Transformer user would write it).

Two uses:

    # training throughput for --seconds (target tokens/s over the training loop)
    python experiments/benchmarks/torch_reference.py --seconds 120 --json out.json
    # time-to-BLEU: snapshots at training-clock minutes, then greedy test2016 BLEU for each
    python experiments/benchmarks/torch_reference.py --minutes 10,20,30,40 --json out.json
    # a quick look that it runs: the first 100 pairs of each split, 2 s of training
    python experiments/benchmarks/torch_reference.py --seconds 2 --first-pairs 100

Schedule: linear warmup over --warmup steps to --lr, then lr * sqrt(warmup / step) (the
inverse-sqrt schedule of ours, conf/schedule/inverse_sqrt.yaml), label smoothing 0.1, gradient
norm clipped to 1.0, Adam (0.9, 0.98, eps 1e-9).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from transformer_vs_torch import TorchTransformer  # noqa: E402

from seq2seq_lab.config import compose_train  # noqa: E402
from seq2seq_lab.data.specials import BOS_ID, EOS_ID, PAD_ID  # noqa: E402
from seq2seq_lab.metrics.corpus import corpus_scores  # noqa: E402
from seq2seq_lab.pipeline.building import build_datamodule  # noqa: E402

DEFAULT_ROOT = REPO.parent / "shared" / "data" / "multi30k"


def multi30k(root: Path, max_tokens: int, seed: int, first_pairs: int | None = None):
    """Our datamodule over Multi30k (joint BPE 8k) as ours reads it at the multi30k scale, set
    up for training and test; ``first_pairs``: only the first N pairs of each split."""
    limits = [f"data.first_pairs.{split}={first_pairs}" for split in ("train", "val", "test")]
    cfg = compose_train(
        "scale=multi30k",
        f"data.root={root}",
        f"data.max_tokens={max_tokens}",
        f"data.seed={seed}",
        *(limits if first_pairs else []),
    )
    datamodule = build_datamodule(cfg.data)
    datamodule.prepare_data()
    datamodule.setup("fit")
    datamodule.setup("test")
    return datamodule


def inverse_sqrt(warmup: int):
    def factor(step: int) -> float:
        step = max(step, 1)
        return step / warmup if step < warmup else math.sqrt(warmup / step)

    return factor


def greedy(model: TorchTransformer, src: Tensor, src_mask: Tensor, max_len: int) -> list[list[int]]:
    """Greedy decoding that reruns the decoder over the whole prefix at every step."""
    model.eval()
    with torch.inference_mode():
        memory = model.transformer.encoder(model._embed(src), src_key_padding_mask=~src_mask)
        ys = torch.full((src.size(0), 1), BOS_ID, dtype=torch.long, device=src.device)
        done = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
        for _ in range(max_len):
            causal = nn.Transformer.generate_square_subsequent_mask(ys.size(1), device=src.device)
            hidden = model.transformer.decoder(
                model._embed(ys), memory, tgt_mask=causal, tgt_is_causal=True,
                memory_key_padding_mask=~src_mask,
            )  # fmt: skip
            next_token = model.output(hidden[:, -1]).argmax(-1)
            next_token = torch.where(done, torch.full_like(next_token, PAD_ID), next_token)
            ys = torch.cat([ys, next_token[:, None]], dim=1)
            done |= next_token == EOS_ID
            if bool(done.all()):
                break
    model.train()
    out = []
    for row in ys[:, 1:].tolist():
        out.append(row[: row.index(EOS_ID)] if EOS_ID in row else row)
    return out


def score_test_set(
    model: TorchTransformer, datamodule, max_len_a: float = 1.5, max_len_b: int = 10
):
    """Greedy test BLEU (sacrebleu, detokenised, cased) and decoding speed."""
    sources, references = datamodule.raw_pairs("test")
    hypotheses = [""] * len(references)
    generated = 0
    start = time.perf_counter()
    device = next(model.parameters()).device
    for batch in datamodule.test_dataloader():
        batch = batch.to(device)
        max_len = int(max_len_a * batch.src.size(1) + max_len_b)
        for index, ids in zip(batch.index.tolist(), greedy(model, batch.src, batch.src_mask,
                                                           max_len)):  # fmt: skip
            hypotheses[index] = datamodule.tgt_tokenizer.decode(ids)
            generated += len(ids) + 1
    seconds = time.perf_counter() - start
    scores = corpus_scores(hypotheses, references)
    return {
        "bleu": scores.bleu,
        "chrf": scores.chrf,
        "decode_seconds": seconds,
        "sentences_per_second": len(references) / seconds,
        "generated_tokens_per_second": generated / seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--seconds", type=float, help="train this long, report throughput")
    parser.add_argument("--minutes", help="comma-separated training-clock marks to score")
    parser.add_argument("--max-tokens", type=int, default=4096)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--label-smoothing", type=float, default=0.1)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--device", default="cpu",
                        help="cpu, cuda, or auto (cuda where there is one)")  # fmt: skip
    parser.add_argument("--precision", choices=["32-true", "bf16-mixed"], default="32-true",
                        help="bf16-mixed: the loop's forward under bfloat16 autocast, as "
                             "Lightning's bf16-mixed does (fp32 weights and optimiser)")  # fmt: skip
    parser.add_argument("--first-pairs", type=int, metavar="N",
                        help="only the first N pairs of each split (a quick look that it runs)")  # fmt: skip
    args = parser.parse_args()
    if (args.seconds is None) == (args.minutes is None):
        parser.error("give exactly one of --seconds and --minutes")
    if args.first_pairs is not None and args.first_pairs < 1:
        parser.error("--first-pairs: expected a positive number")
    if args.threads:
        torch.set_num_threads(args.threads)
    marks = [float(m) for m in args.minutes.split(",")] if args.minutes else []
    budget = args.seconds if args.seconds is not None else max(marks) * 60

    device = torch.device(
        ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    )
    torch.manual_seed(args.seed)
    datamodule = multi30k(args.root, args.max_tokens, args.seed, args.first_pairs)
    vocab = datamodule.tgt_vocab_size
    shape = {"d_model": 256, "heads": 4, "d_ff": 1024, "layers": 3}  # P1's
    model = TorchTransformer(vocab=vocab, dropout=args.dropout, **shape).to(device).train()
    parameters = sum(p.numel() for p in model.parameters())  # the tied table counted once
    described = (f"d_model {shape['d_model']}, heads {shape['heads']}, d_ff {shape['d_ff']}, "
                 f"encoder_layers {shape['layers']}, decoder_layers {shape['layers']}, norm pre, "
                 f"tie_embeddings all, vocab {vocab}")  # fmt: skip
    print(f"torch.nn.Transformer: {parameters:,} parameters ({described})", flush=True)
    optimizer = torch.optim.Adam(
        model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9, fused=True
    )  # fmt: skip  (the kernel ours uses in fp32)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, inverse_sqrt(args.warmup))

    bf16 = args.precision == "bf16-mixed"
    tokens, steps, clock = 0, 0, 0.0
    snapshots: dict[float, dict[str, Tensor]] = {}
    pending = list(marks)
    epoch = 0
    while clock < budget:
        loader = datamodule.train_dataloader()
        loader.batch_sampler.set_epoch(epoch)  # a new length-bucketed order, as Lightning does
        started = time.perf_counter()
        for batch in loader:
            # the copy to the device is part of the loop, as Lightning's is part of ours
            batch = batch.to(device)
            with torch.autocast(device.type, torch.bfloat16, enabled=bf16):
                logits = model(batch.src, batch.src_mask, batch.tgt_in)
            loss = F.cross_entropy(logits.float().flatten(0, 1), batch.tgt_out.flatten(),
                                   ignore_index=PAD_ID, label_smoothing=args.label_smoothing)  # fmt: skip
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            steps += 1
            tokens += int((batch.tgt_out != PAD_ID).sum())  # (a sync on cuda: honest clock)
            now = time.perf_counter()
            clock += now - started
            started = now
            while pending and clock >= pending[0] * 60:
                snapshots[pending.pop(0)] = {k: v.clone() for k, v in model.state_dict().items()}
                started = time.perf_counter()  # copying weights is not training
            if clock >= budget:
                break
        epoch += 1

    results = {
        "system": "torch.nn.Transformer (plain loop)",
        "steps": steps,
        "train_seconds": clock,
        "target_tokens": tokens,
        "tokens_per_second": tokens / clock,
        "parameters": parameters,
        "model": described,
        "threads": torch.get_num_threads(),
        "device": str(device),
        "precision": args.precision,
        "torch": torch.__version__,
        "hyperparameters": {k: str(v) for k, v in vars(args).items()},
        "marks": {},
    }
    for minute, state in snapshots.items():
        model.load_state_dict(state)
        results["marks"][f"{minute:g}"] = score_test_set(model, datamodule)
        print(f"minute {minute:g}: greedy test BLEU {results['marks'][f'{minute:g}']['bleu']:.2f}")
    print(f"{steps} steps in {clock:.0f} s: {results['tokens_per_second']:.0f} target tokens/s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
