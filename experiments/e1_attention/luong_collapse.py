"""The table of Luong's collapse study (luong_collapse.sh) and of E1's Luong recipe
(luong_recipe.sh): per setting (optimiser, learning-rate schedule, updates, score, bridge, W_m's
initial scale), the seeds whose attention collapsed onto the source's end at the setting's last
update, that is whose mean attention mass on the source's last two positions (its last word and
EOS) exceeds COLLAPSED, the mean over seeds of the best validation BLEU (the recipe's rule reads
it), and per seed that mass, the share of target tokens attending most there, the attention
entropy and the BLEU of the split the run was tested on (the collapse study's: greedy on
validation; the recipe's: test2016, beam 5).

    python experiments/e1_attention/luong_collapse.py \
        experiments/e1_attention/results/multi30k-luong-collapse/runs \
        experiments/e1_attention/results/multi30k-luong-collapse-sgd/runs \
        experiments/e1_attention/results/multi30k-luong-collapse-warmup/runs
    python experiments/e1_attention/luong_collapse.py \
        experiments/e1_attention/results/multi30k-luong-scaled/runs \
        experiments/e1_attention/results/multi30k-luong-sgd/runs
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from seq2seq_lab.report.runs import Run, find_runs

COLLAPSED = 0.5  # the rule: mass on the last two source positions above one half


def optimiser(run: Run) -> str:
    """``Adam 0.001, clip 1.0``: the optimiser's class, learning rate and gradient-norm clip."""
    name = str(run.config_value("optim._target_", "?")).rsplit(".", 1)[-1]
    lr = run.config_value("optim.lr")
    clip = run.config_value("trainer.gradient_clip_val")
    return f"{name} {lr}, clip {clip}"


def schedule(run: Run) -> str:
    """``Constant`` or ``InverseSqrt, warmup 400``: the learning-rate schedule."""
    name = str(run.config_value("schedule._target_", "?")).rsplit(".", 1)[-1]
    warmup = run.config_value("schedule.warmup_steps")
    return f"{name}, warmup {warmup}" if warmup else name


def score(run: Run) -> str:
    """``general`` (Luong's) or ``general / sqrt(d)`` (model.attention.scaled)."""
    name = str(run.config_value("model.attention.score", "general"))
    return f"{name} / sqrt(d)" if run.config_value("model.attention.scaled") else name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="the study's sweep directories")
    args = parser.parse_args(argv)
    settings: dict[tuple, list] = defaultdict(list)
    for directory in args.runs:
        if not Path(directory).is_dir():  # a queue not started yet
            print(f"luong_collapse.py: {directory}: no runs yet, left out", file=sys.stderr)
            continue
        for run in find_runs(directory)[0]:
            alignment = run.results.get("alignment")
            if not run.finished or not alignment:
                continue
            key = (optimiser(run), schedule(run), run.config_value("trainer.max_steps"),
                   score(run), run.config_value("model.bridge"),
                   run.config_value("model.attention.init_scale"))  # fmt: skip
            best = (run.results.get("training") or {}).get("best_val_bleu")
            settings[key].append((run.seed, alignment, run.score("bleu"), best))
    print(f"Collapsed: mass on the last two source positions > {COLLAPSED} at the last update.\n")
    print("| optimiser | schedule | updates | score | bridge | W_m scale | collapsed "
          "| best val BLEU, mean | seeds: mass on the last two (argmax share, H / log S, "
          "BLEU) |")  # fmt: skip
    print("|---|---|---:|---|---|---:|---:|---:|---|")
    for (optim, sched, updates, kind, bridge, scale), rows in sorted(
        settings.items(), key=lambda item: str(item[0])
    ):
        rows.sort(key=lambda row: row[0])
        collapsed = sum(a["end_mass"] > COLLAPSED for _, a, _, _ in rows)
        bests = [best for *_, best in rows if best is not None]
        mean_best = f"{sum(bests) / len(bests):.2f}" if bests else "?"
        per_seed = "; ".join(
            f"s{seed} **{a['end_mass']:.2f}** ({a['on_end']:.2f}, "
            f"{a['normalised_entropy']:.2f}, {bleu:.1f})"
            for seed, a, bleu, _ in rows
        )
        print(
            f"| {optim} | {sched} | {updates} | {kind} | {bridge} | {scale} "
            f"| {collapsed} of {len(rows)} | {mean_best} | {per_seed} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
