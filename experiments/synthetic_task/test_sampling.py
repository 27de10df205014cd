"""How precisely a test set measures a difference: for every pair of finished runs, the
test-sampling standard error of their BLEU difference, sqrt(Var*(BLEU_B* - BLEU_A*)) over the
report's bootstrap resamples of the test sentences (seq2seq_lab/report/evidence.py: the same
RESAMPLES resamples, the same seed). This is the v_test term of the report's test for one seed
per variant: what another test set of the same size would move the difference by, with the
models held fixed. Also each run's test BLEU and BLEU by source length.

    python experiments/synthetic_task/test_sampling.py RUN_DIR RUN_DIR [...]
"""

from __future__ import annotations

import argparse
import itertools
import sys

import numpy as np

from seq2seq_lab.report.evidence import TEST_BLEU
from seq2seq_lab.report.runs import find_runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run directories (results.json, hypotheses)")
    args = parser.parse_args(argv)
    runs = [run for path in args.runs for run in find_runs(path)[0] if run.finished]
    resampled = {}
    print("| run | variant | seed | test BLEU | sentences | BLEU by source length |")
    print("|---|---|---:|---:|---:|---|")
    for run in runs:
        samples = TEST_BLEU.resampled(run)
        if samples is None:
            print(f"{run.path}: no test outputs", file=sys.stderr)
            continue
        resampled[run.path] = (run, samples)
        buckets = ", ".join(f"{b} {v['bleu']:.2f} ({v['count']})" for b, v in run.buckets().items())
        print(f"| {run.path} | {run.variant} | {run.seed} | {run.score('bleu'):.2f} "
              f"| {run.test.get('sentences')} | {buckets} |")  # fmt: skip
    print()
    print("| A | B | B - A | test-sampling SE of B - A |")
    print("|---|---|---:|---:|")
    for (_, (a, sa)), (_, (b, sb)) in itertools.combinations(resampled.items(), 2):
        delta = b.score("bleu") - a.score("bleu")
        se = float(np.std(sb - sa, ddof=1))
        print(f"| {a.path} | {b.path} | {delta:+.2f} | {se:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
