"""Score a run's length probe again from the files it wrote, without its model.

A probe record holds what :func:`seq2seq_lab.analysis.length_probe.score_probe` computed when
the run ended. When the scoring gains a figure (the output's length against the references
came after E1's first runs on Multi30k), the runs made before have everything it needs on
disk: the hypotheses of each join (``RUN/length_probe/join-<k>.txt``) and the tested pairs
(the data set's lines ``RUN/test_set.json`` names, or the copies ``RUN/sources.<split>.txt``,
``RUN/references.<split>.txt``: :mod:`seq2seq_lab.data.test_set`). Rescoring recomputes the
record from them and rewrites ``results.json``; the BLEU of every join must come out as the
recorded one, else the files are not those the probe scored and nothing is written.

    python experiments/e1_length_probe/probe_rescore.py experiments/e1_attention/results/multi30k/runs/*
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from seq2seq_lab.analysis.length_probe import PROBE, score_probe
from seq2seq_lab.data.test_set import KINDS, TEST_SET_FILE, read_test_lines
from seq2seq_lab.errors import DataError, UserError
from seq2seq_lab.record.compressed_outputs import read_kept_lines
from seq2seq_lab.record.results import read_results, write_results

SAME_BLEU = 1e-9  # sacrebleu is deterministic: the same files give the same score


def _lines(path: Path) -> list[str]:
    lines = read_kept_lines(path)  # or its .gz in a committed grid
    if lines is None:
        raise DataError(f"{path}: missing; the probe cannot be rescored without it")
    return lines


def _tested(run_dir: Path, kind: str, split: str) -> list[str]:
    lines = read_test_lines(run_dir, kind, split)
    if lines is None:
        raise DataError(
            f"{run_dir}: neither {kind}.{split}.txt nor {TEST_SET_FILE}; the probe cannot be "
            "rescored without the tested pairs"
        )
    return lines


def rescore(run_dir: str | Path) -> bool:
    """Rescore ``run_dir``'s probe in place; False when its results.json has no probe."""
    run_dir = Path(run_dir)
    path = run_dir / "results.json"
    results = read_results(path)
    probe = results.get(PROBE)
    if not probe:
        return False
    split = probe["split"]
    sources, references = (_tested(run_dir, kind, split) for kind in KINDS)
    hypotheses = {int(k): _lines(run_dir / PROBE / f"join-{k}.txt") for k in probe["joins"]}
    scored = score_probe(hypotheses, sources, references, tuple(probe["edges"]))
    for k, entry in scored["joins"].items():
        recorded = probe["joins"][k]["bleu"]
        if not math.isclose(entry["bleu"], recorded, rel_tol=0.0, abs_tol=SAME_BLEU):
            raise DataError(
                f"{run_dir / PROBE / f'join-{k}.txt'}: scores BLEU {entry['bleu']:.4f}, the "
                f"record says {recorded:.4f}: not the outputs the probe scored; left as it is"
            )
    probe.update(scored)
    write_results(path, results)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python experiments/e1_length_probe/probe_rescore.py",
        description="Rescore the length probe of finished runs from their stored outputs.",
    )
    parser.add_argument("runs", nargs="+", help="run directories (holding results.json)")
    args = parser.parse_args(argv)
    try:
        for run in args.runs:
            done = rescore(run)
            print(f"{run}: {'rescored' if done else 'no length probe, left as it is'}")
    except (UserError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
