"""Where a decoder's source attention looks: an alignment, or one fixed position.

For target position t of a sentence with S source positions (EOS included) and attention
weights alpha_t over them (teacher forcing, no dropout), averaged over the real target tokens:

    H_t / log S                       normalised entropy: 0 = all weight on one position,
                                      1 = uniform (architectures.md section 2, alpha = softmax(e))
    max_i alpha_{t,i}                 the weight of the most attended position
    [argmax_i alpha_{t,i} >= S - 2]   share of target tokens whose most attended position is
                                      the source's last token or its EOS
    alpha_{t,S-1} + alpha_{t,S}       the attention mass on those two positions
and, per sentence of T target tokens, averaged over sentences:

    |{argmax_i alpha_{t,i} : t = 1..T}| / T    distinct most-attended positions per target token

An alignment moves along the source as the target advances (a high distinct share, a low share
on the end). Attention that sits on the sentence's end at every step hands the decoder the same
context vector throughout, the encoder's summary of the whole source: the network then works
as a plain seq2seq whatever its attention could have done. A one-hot softmax has a Jacobian
diag(alpha) - alpha alpha^T of about zero, so once the weights saturate there the scores get
no gradient to move them (architectures.md section 5, "the softmax saturates on one key").

    python -m seq2seq_lab.analysis.alignment experiments/e1_attention/results/multi30k/runs/{3..8}

reads each run's checkpoint and the test pairs it was scored on (the data set's lines its
``test_set.json`` names, or its copies ``sources.test.txt``, ``references.test.txt``) and
prints one table row per run; ``--write`` also stores the figures
of the whole test split in each results.json under ``alignment``, as training does after its
test since this module exists (runs made before it get theirs this way). The weights are the
teacher-forced pass's ``ForwardOutput.attention``: the recurrent attention models return them, a
Transformer's fused attention does not (its cross-attention entropy per layer and head is in
the Transformer diagnostics, analysis/entropy.py). The figures describe trained models; nothing
is chosen on them.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path

import torch
from torch import Tensor, nn

from seq2seq_lab.analysis.alignment_record import (
    ALIGNMENT,
    COLUMNS,
    END_POSITIONS,
    AlignmentFigures,
    alignment_record,
)
from seq2seq_lab.analysis.entropy import query_entropy
from seq2seq_lab.analysis.trace import eval_mode
from seq2seq_lab.data.batch import Batch
from seq2seq_lab.data.batching import EncodedPair, collate
from seq2seq_lab.data.specials import PAD_ID
from seq2seq_lab.errors import DataError, UserError


class _Sums:
    def __init__(self) -> None:
        self.entropy = self.max_weight = self.on_end = self.end_mass = self.distinct = 0.0
        self.tokens = self.sentences = 0

    def add(self, weights: Tensor, batch: Batch) -> None:
        """weights [B, T, S] of one teacher-forced batch."""
        queries = batch.tgt_out != PAD_ID  # [B, T] real target tokens
        src_len = batch.src_mask.sum(dim=1)  # [B] S of each sentence
        # log S = 0 for a one-position source, whose entropy is 0: the clamp keeps it 0
        entropy = query_entropy(weights) / src_len.double().log().clamp_min(1e-30)[:, None]
        top = weights.argmax(dim=-1)  # [B, T]
        end = top >= (src_len - END_POSITIONS)[:, None]
        positions = torch.arange(weights.size(-1), device=weights.device)
        last = (positions >= (src_len - END_POSITIONS)[:, None]) & (positions < src_len[:, None])
        mass = (weights * last[:, None, :]).sum(dim=-1)  # [B, T]
        self.entropy += float(entropy[queries].sum())
        self.max_weight += float(weights.amax(dim=-1)[queries].sum())
        self.on_end += float(end[queries].sum())
        self.end_mass += float(mass[queries].sum())
        self.tokens += int(queries.sum())
        for row, real in zip(top, queries):
            positions = row[real]
            self.distinct += len(set(positions.tolist())) / max(len(positions), 1)
            self.sentences += 1

    def figures(self) -> AlignmentFigures:
        tokens, sentences = max(self.tokens, 1), max(self.sentences, 1)
        return AlignmentFigures(
            normalised_entropy=self.entropy / tokens,
            max_weight=self.max_weight / tokens,
            on_end=self.on_end / tokens,
            end_mass=self.end_mass / tokens,
            distinct=self.distinct / sentences,
            tokens=self.tokens,
            sentences=self.sentences,
        )


@torch.no_grad()
def alignment_figures(network: nn.Module, batches: Iterable[Batch]) -> AlignmentFigures | None:
    """The figures of the module docstring over ``batches`` (teacher forcing, no dropout);
    None for a network that returns no source attention (plain seq2seq)."""
    sums = _Sums()
    with eval_mode(network):
        for batch in batches:
            attention = network(batch.src, batch.src_mask, batch.tgt_in).attention
            if attention is None:
                return None
            sums.add(attention.double(), batch)
    return sums.figures()


def pair_batches(pairs: Sequence[EncodedPair], batch_size: int) -> Iterable[Batch]:
    """Batches of ``batch_size`` pairs, sorted by source length to keep the padding small
    (the figures do not depend on it: padding gets no weight and no query)."""
    ordered = sorted(pairs, key=lambda pair: len(pair.src))
    for start in range(0, len(ordered), batch_size):
        yield collate(ordered[start : start + batch_size])


def run_alignment(
    run_dir: str | Path,
    checkpoint: str = "best.ckpt",
    sentences: int | None = None,
    batch_size: int = 50,
    write: bool = False,
) -> dict:
    """The figures of a finished run's checkpoint on the test pairs it stored (the first
    ``sentences``, or all), with the run's variant, seed and test BLEU (its results.json);
    ``write`` stores the record there (the whole split only: it is what training records)."""
    from seq2seq_lab.checkpoint import load_checkpoint
    from seq2seq_lab.data.datamodule import tokenizers_from_checkpoint_state
    from seq2seq_lab.data.test_set import KINDS, TEST_SET_FILE, read_test_lines
    from seq2seq_lab.record.results import read_results, write_results

    run_dir = Path(run_dir)
    results = read_results(run_dir / "results.json")
    split = (results.get("test") or {}).get("split", "test")
    tested = [read_test_lines(run_dir, side, split) for side in KINDS]
    if any(lines is None for lines in tested):
        raise DataError(
            f"{run_dir}: neither sources/references.{split}.txt nor {TEST_SET_FILE}; the run "
            "names its tested pairs there"
        )
    loaded = load_checkpoint(run_dir / "checkpoints" / checkpoint)
    src_tokenizer, tgt_tokenizer = tokenizers_from_checkpoint_state(loaded.datamodule_state)
    sources, references = (lines[:sentences] for lines in tested)
    pairs = [
        EncodedPair(i, src_tokenizer.encode(source), tgt_tokenizer.encode(reference))
        for i, (source, reference) in enumerate(zip(sources, references, strict=True))
    ]
    figures = alignment_figures(loaded.module.network, pair_batches(pairs, batch_size))
    if figures is None:
        raise UserError(
            f"{run_dir}: its {loaded.family} network returns no source attention, so there is "
            "no alignment to measure"
        )
    if write:
        results[ALIGNMENT] = alignment_record(figures, split)
        write_results(run_dir / "results.json", results)
    return {
        "run": str(run_dir),
        "variant": results.get("variant"),
        "seed": results.get("seed"),
        "test_bleu": (results.get("test") or {}).get("bleu", math.nan),
        **asdict(figures),
    }


def markdown_table(rows: Sequence[dict]) -> str:
    headings = " | ".join(heading for _, heading in COLUMNS)
    lines = [
        f"| run | variant | seed | test BLEU | {headings} |",
        "|---|---|---:|---:" + "|---:" * len(COLUMNS) + "|",
    ]
    for row in rows:
        figures = " | ".join(f"{row[name]:.3f}" for name, _ in COLUMNS)
        lines.append(
            f"| {row['run']} | {row['variant']} | {row['seed']} | {row['test_bleu']:.2f} "
            f"| {figures} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m seq2seq_lab.analysis.alignment",
        description="Where each run's source attention looks on its test pairs.",
    )
    parser.add_argument("runs", nargs="+", help="run directories (results.json, checkpoints/)")
    parser.add_argument("--checkpoint", default="best.ckpt", help="file under RUN/checkpoints/")
    parser.add_argument("--sentences", type=int, default=None, help="first N pairs (all)")
    parser.add_argument(
        "--write", action="store_true", help="store the figures in each run's results.json"
    )
    args = parser.parse_args(argv)
    if args.write and args.sentences is not None:
        parser.error("--write records the whole tested split, as training does: drop --sentences")
    torch.set_num_threads(1)  # small batches; leaves the other core to a running grid
    try:
        rows = [
            run_alignment(run, args.checkpoint, args.sentences, write=args.write)
            for run in args.runs
        ]
    except (UserError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(markdown_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
