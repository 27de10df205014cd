"""Decoding speed on test2016: ours vs JoeyNMT 2.3, greedy and beam 5, and ours cached/uncached.

The protocol's P3 (../shared/bench/README.md): 64 sentences per batch in file order, output
limit 100 tokens, beam 5 with length penalty alpha 1.0 (GNMT's, the same formula in both).
Both models are trained under our CPU recipe (conf/recipe/transformer_multi30k_cpu.yaml: P1's
shape, peak lr and warmup from the recipe's config) for the same training wall time
(``--train-minutes``, default 30), so that both produce real translations of similar length
(issue 16.4): ours by ``time_to_bleu.train_recipe`` with a wall-clock snapshot, JoeyNMT with P1
given the recipe's lr and warmup (``joeynmt_peer.write_recipe_config``), stopped by SIGINT.
Speed follows output length, so sentences/s, generated tokens/s (subword tokens, EOS
included), the mean output length and each system's test2016 BLEU (sacrebleu, cased,
detokenised) are reported side by side; JoeyNMT's time is its own "Generation took" (its
batching and decoding loop, no start-up), ours times the same loop in-process.

    python experiments/benchmarks/decoding_vs_peer.py --out experiments/benchmarks/results
    python experiments/benchmarks/decoding_vs_peer.py --ours RUN/snapshots/minute-030.ckpt \
        --peer .cache/peer/models/p1_transformer_cpu_recipe/latest.ckpt   # reuse trained models
    # ours alone (no JoeyNMT needed) on the first 2 test sentences: a quick look that it runs
    python experiments/benchmarks/decoding_vs_peer.py --systems ours --ours CKPT --first-pairs 2 \
        --rounds 1 --threads 1

The peer must have been installed first (``joeynmt_peer.py setup``); without it the script stops
with one line before anything is trained. Our model's parameter count and shape are printed
first: the figures are for that network.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import joeynmt_peer  # noqa: E402
import time_to_bleu  # noqa: E402
from portable_json import write_json  # noqa: E402

# torch and seq2seq_lab are imported where used: a missing peer is said at once, not after
# seconds of imports

REPO = Path(__file__).resolve().parents[2]
BATCH = 64
MAX_OUTPUT = 100  # P3's max_output_length: JoeyNMT generates at most 100 tokens, EOS included


def train_ours(
    minutes: float, root: Path, work: Path, first_pairs: int | None = None, threads: int = 2
) -> Path:
    run_dir, _ = time_to_bleu.train_recipe([minutes], root, work, first_pairs, threads)
    return run_dir / "snapshots" / f"minute-{minutes:03g}.ckpt"


def train_peer(minutes: float, work: Path, threads: int = 2) -> Path:
    recipe = time_to_bleu.recipe_values()
    config = joeynmt_peer.write_recipe_config(work, lr=recipe["lr"], warmup=recipe["warmup"])
    joeynmt_peer.train(config, seconds=minutes * 60, work=work, threads=threads)
    return work / "models" / config / "latest.ckpt"  # saved on SIGINT


class Ours:
    """Our checkpoint and test2016 sources in batches of 64 in file order (all of test2016, or
    its first ``test_pairs`` sentences, whatever subset the checkpoint was trained on)."""

    def __init__(self, checkpoint: Path, root: Path, test_pairs: int | None = None) -> None:
        from seq2seq_lab.checkpoint import load_checkpoint
        from seq2seq_lab.data.batching import source_batch
        from seq2seq_lab.pipeline.building import build_datamodule

        loaded = load_checkpoint(checkpoint)
        self.network = loaded.module.network.eval()
        self.parameters = sum(p.numel() for p in self.network.parameters())
        self.shape = time_to_bleu.shape(loaded.run_config["model"])
        limits = {"train": None, "val": None, "test": test_pairs}
        data = dict(loaded.run_config["data"], root=str(root), first_pairs=limits)
        datamodule = build_datamodule(data)
        datamodule.load_state_dict(loaded.datamodule_state)
        datamodule.prepare_data()
        datamodule.setup("test")
        self.tokenizer = datamodule.tgt_tokenizer
        sources, self.references = datamodule.raw_pairs("test")
        self.outputs: dict[tuple[int, bool], list[str]] = {}  # (beam, kv_cache) -> last texts
        encoded = [datamodule.encode_source(s) for s in sources]
        self.batches = [source_batch(encoded[i : i + BATCH]) for i in range(0, len(encoded), BATCH)]

    def run(self, beam: int, kv_cache: bool = True) -> dict:
        import torch

        from seq2seq_lab.decoding import DecodingSettings, decode
        from seq2seq_lab.metrics.corpus import corpus_bleu

        # P3 fixes every setting: alpha 1.0, no minimum, at most MAX_OUTPUT tokens; our limit
        # counts EOS as JoeyNMT's does (it was MAX_OUTPUT + 1: one token more than the peer's)
        settings = DecodingSettings(
            beam_size=beam, length_penalty=1.0, max_len_a=0.0, max_len_b=MAX_OUTPUT, min_len=0
        )
        if hasattr(self.network, "kv_cache"):
            self.network.kv_cache = kv_cache
        generated, hypotheses = 0, []
        start = time.perf_counter()
        with torch.inference_mode():
            for batch in self.batches:
                out = decode(self.network, batch.src, batch.src_mask, settings)
                for ids in out.tokens:
                    generated += generated_tokens(len(ids))
                    hypotheses.append(ids)
        seconds = time.perf_counter() - start
        if hasattr(self.network, "kv_cache"):
            self.network.kv_cache = True
        texts = [self.tokenizer.decode(ids) for ids in hypotheses]
        self.outputs[beam, kv_cache] = texts
        return _speed(seconds, len(hypotheses), generated, corpus_bleu(texts, self.references))


def generated_tokens(length: int) -> int:
    """Tokens a decoder generated for an output of ``length`` tokens (EOS not among them):
    one more for its EOS, unless it stopped at the limit without one."""
    return min(length + 1, MAX_OUTPUT)


def _speed(seconds: float, sentences: int, generated: int, bleu: float) -> dict:
    return {"seconds": seconds, "sentences_per_second": sentences / seconds,
            "generated_tokens_per_second": generated / seconds,
            "mean_output_tokens": generated / sentences, "bleu": bleu}  # fmt: skip


def peer_run(
    config: str, checkpoint: Path, work: Path, references: list[str], threads: int = 2
) -> dict:
    import sentencepiece as spm

    from seq2seq_lab.metrics.corpus import corpus_bleu

    seconds, hypotheses = joeynmt_peer.decode(
        config, checkpoint=checkpoint, work=work, threads=threads
    )
    processor = spm.SentencePieceProcessor(model_file=str(work / "data" / "spm8k.model"))
    generated = sum(generated_tokens(len(processor.encode(h))) for h in hypotheses)
    return _speed(seconds, len(hypotheses), generated, corpus_bleu(hypotheses, references))


def peer_systems(ckpt: Path, work: Path, refs: list[str], threads: int) -> dict:
    """JoeyNMT's two P3 decodings of its checkpoint ``ckpt``."""
    return {
        "joeynmt greedy": lambda: peer_run("p3_decode_greedy", ckpt, work, refs, threads),
        "joeynmt beam 5": lambda: peer_run("p3_decode_beam5", ckpt, work, refs, threads),
    }


def profile_ours(ours: Ours, beam: int) -> None:
    """Where our decoding time goes: torch.profiler over the first 4 batches."""
    from torch.profiler import ProfilerActivity, profile

    ours.batches = ours.batches[:4]
    ours.run(beam)  # warm-up
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        speed = ours.run(beam)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20))
    print(f"beam {beam}: {speed['sentences_per_second']:.1f} sent/s, "
          f"{speed['generated_tokens_per_second']:.0f} tokens/s (profiled)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=joeynmt_peer.DEFAULT_DATA)
    parser.add_argument("--train-minutes", type=float, default=30)
    parser.add_argument("--ours", type=Path, help="our checkpoint (skip our training)")
    parser.add_argument("--peer", type=Path, help="JoeyNMT checkpoint (skip its training)")
    parser.add_argument("--systems", default="ours,joeynmt",
                        help="ours,joeynmt (the comparison) or ours (no JoeyNMT needed: our "
                             "greedy, beam 5 and uncached greedy)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2, help="torch threads of both systems")
    parser.add_argument("--first-pairs", type=int, metavar="N",
                        help="decode only the first N test sentences, and train ours (when "
                             "--ours is not given) on the first N pairs of each split: a quick "
                             "look that it runs")  # fmt: skip
    parser.add_argument("--work", type=Path, default=joeynmt_peer.DEFAULT_WORK)
    parser.add_argument("--out", type=Path, help="write decoding.json here")
    parser.add_argument("--profile", type=int, metavar="BEAM",
                        help="profile our decoding of the first 4 batches at this beam size "
                             "(needs --ours) and exit")  # fmt: skip
    args = parser.parse_args()
    systems = args.systems.split(",")
    if "ours" not in systems or not set(systems) <= {"ours", "joeynmt"}:
        parser.error(f"--systems {args.systems}: expected ours,joeynmt or ours")
    if args.first_pairs is not None and args.first_pairs < 1:
        parser.error("--first-pairs: expected a positive number")
    if args.profile and args.ours is None:
        parser.error("--profile needs --ours CHECKPOINT")
    with_peer = "joeynmt" in systems and not args.profile
    if with_peer:
        try:  # before our training: a missing peer must not cost 30 minutes first
            joeynmt_peer.prepare(args.work, args.root)
        except joeynmt_peer.PeerMissing as missing:
            sys.exit(f"error: {missing}")
    import torch

    torch.set_num_threads(args.threads)
    if args.profile:
        profile_ours(Ours(args.ours, args.root, args.first_pairs), args.profile)
        return
    args.work.mkdir(parents=True, exist_ok=True)
    ours_ckpt = args.ours or train_ours(
        args.train_minutes, args.root, args.work, args.first_pairs, args.threads
    )
    peer_ckpt = None
    if with_peer:
        peer_ckpt = args.peer or train_peer(args.train_minutes, args.work, args.threads)
    ours = Ours(ours_ckpt, args.root, args.first_pairs)
    refs = ours.references
    print(f"ours: {ours.parameters:,} parameters ({ours.shape}), {len(refs)} test sentences "
          f"in batches of {BATCH}", flush=True)  # fmt: skip

    systems = {
        "ours greedy": lambda: ours.run(1),
        "ours beam 5": lambda: ours.run(5),
        "ours greedy, no KV cache": lambda: ours.run(1, kv_cache=False),
    }
    if with_peer:  # interleaved: ours greedy, joeynmt greedy, ours beam 5, joeynmt beam 5, ...
        peer = peer_systems(peer_ckpt, args.work, refs, args.threads)
        order = ["ours greedy", "joeynmt greedy", "ours beam 5", "joeynmt beam 5",
                 "ours greedy, no KV cache"]  # fmt: skip
        systems = {name: {**systems, **peer}[name] for name in order}
    runs: dict[str, list[dict]] = {name: [] for name in systems}
    for r in range(args.rounds):
        for name in systems if r % 2 == 0 else list(systems)[::-1]:
            runs[name].append(systems[name]())
            last = runs[name][-1]
            print(f"round {r + 1} {name}: {last['sentences_per_second']:.1f} sent/s, "
                  f"{last['generated_tokens_per_second']:.0f} tokens/s", flush=True)  # fmt: skip

    def median(name: str, key: str) -> float:
        return statistics.median(x[key] for x in runs[name])

    table = {name: {key: median(name, key) for key in runs[name][0]} for name in runs}

    def ratio(a: str, b: str, key: str) -> float:
        return table[a][key] / table[b][key]

    ratios = {}
    if with_peer:
        for search, ours_name, peer_name in (("beam 5", "ours beam 5", "joeynmt beam 5"),
                                             ("greedy", "ours greedy", "joeynmt greedy")):  # fmt: skip
            ratios[f"{search} sentences/s, ours / joeynmt"] = ratio(
                ours_name, peer_name, "sentences_per_second"
            )
            ratios[f"{search} tokens/s, ours / joeynmt"] = ratio(
                ours_name, peer_name, "generated_tokens_per_second"
            )
    # the cache is an optimisation: a ratio is only worth reporting for identical translations
    same = ours.outputs[1, True] == ours.outputs[1, False]
    ratios[f"greedy, cached / uncached ({'same outputs' if same else 'OUTPUTS DIFFER'})"] = (
        table["ours greedy, no KV cache"]["seconds"] / table["ours greedy"]["seconds"]
    )
    print("\nmedians:")
    for name, row in table.items():
        print(f"  {name:26s} {row['sentences_per_second']:7.1f} sent/s "
              f"{row['generated_tokens_per_second']:8.0f} tokens/s "
              f"{row['mean_output_tokens']:6.1f} tokens/sentence  BLEU {row['bleu']:5.2f}")  # fmt: skip
    for name, value in ratios.items():
        print(f"  {name:42s} {value:5.2f}x")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        write_json(args.out / "decoding.json",
                   {"medians": table, "ratios": ratios, "runs": runs,
                    "cached_equals_uncached": same, "ours_parameters": ours.parameters, "ours_model": ours.shape,
                    "test_sentences": len(refs), "ours_checkpoint": str(ours_ckpt),
                    "peer_checkpoint": str(peer_ckpt) if peer_ckpt else None})  # fmt: skip


if __name__ == "__main__":
    main()
