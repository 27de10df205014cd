"""Does bf16-mixed training keep quality? Test BLEU at a fixed number of updates, fp32 vs
bf16-mixed, three seeds each side (issue 16.1), from one sweep.

Run the sweep (the synthetic task at the `synthetic` scale, every run stopped at the same update,
two runs side by side at one thread each), then summarise it:

    python -m seq2seq_lab.train -m model=transformer,bahdanau \\
        trainer.precision=32-true,bf16-mixed seed=1,2,3 trainer.max_steps=600 \\
        trainer.max_time=null threads=1 '~callbacks.progress_bar' \\
        'variant=${hydra:runtime.choices.model}_${trainer.precision}' \\
        experiment_name=precision_quality hydra/launcher=joblib hydra.launcher.n_jobs=2 \\
        hydra.sweep.dir=SWEEP
    python experiments/benchmarks/precision_quality.py SWEEP --csv OUT.csv

The summary gives, per model, each precision's BLEU per seed, mean and sample standard
deviation, and Welch's t-test of the difference (scipy); "within seed noise" means the
difference is not significant at 0.05. The CSV holds one row per run, no machine paths.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from collections import defaultdict
from pathlib import Path

from scipy import stats

FIELDS = ["variant", "seed", "status", "precision", "steps", "test_bleu", "test_chrf",
          "train_seconds", "train_tokens_per_second"]  # fmt: skip


def read_runs(sweep: Path) -> list[dict]:
    rows = []
    for path in sorted(sweep.glob("*/results.json")):
        r = json.loads(path.read_text(encoding="utf-8"))
        rows.append({
            "variant": r["variant"], "seed": r["seed"], "status": r["status"],
            "precision": (r.get("precision") or {}).get("precision"),
            "steps": (r.get("training") or {}).get("steps"),
            "test_bleu": (r.get("test") or {}).get("bleu"),
            "test_chrf": (r.get("test") or {}).get("chrf"),
            "train_seconds": (r.get("timing") or {}).get("train_seconds"),
            "train_tokens_per_second": (r.get("timing") or {}).get("train_tokens_per_second"),
        })  # fmt: skip
    return rows


def summary(rows: list[dict]) -> str:
    by_model: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in sorted(rows, key=lambda r: (r["variant"], r["seed"])):
        if row["status"] == "completed" and row["test_bleu"] is not None:
            model, precision = row["variant"].split("_", 1)
            by_model[model][precision].append(row["test_bleu"])
    lines = ["| model | precision | BLEU per seed | mean ± std | Welch t-test vs 32-true |",
             "|---|---|---|---|---|"]  # fmt: skip
    for model, groups in by_model.items():
        base = groups.get("32-true", [])
        for precision, scores in groups.items():
            spread = statistics.stdev(scores) if len(scores) > 1 else float("nan")
            test = ""
            if precision != "32-true" and len(scores) > 1 and len(base) > 1:
                result = stats.ttest_ind(scores, base, equal_var=False)
                diff = statistics.mean(scores) - statistics.mean(base)
                test = f"{diff:+.2f} BLEU, p = {result.pvalue:.2f}"
            seeds = " / ".join(f"{s:.2f}" for s in scores)
            lines.append(f"| {model} | {precision} | {seeds} | "
                         f"{statistics.mean(scores):.2f} ± {spread:.2f} | {test} |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweep", type=Path)
    parser.add_argument("--csv", type=Path, help="write one row per run here")
    args = parser.parse_args()
    rows = read_runs(args.sweep)
    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        with args.csv.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(rows)
    print(summary(rows))


if __name__ == "__main__":
    main()
