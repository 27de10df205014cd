"""The table of Luong's collapse study (luong_collapse.sh): per setting (optimiser, bridge,
W_m's initial scale), the seeds whose attention collapsed onto the source's end after 200
updates, that is whose mean attention mass on the source's last two positions (its last word
and EOS) exceeds COLLAPSED, and per seed that mass, the share of target tokens attending most
there, the attention entropy and the greedy validation BLEU.

    python experiments/e1_attention/luong_collapse.py \
        experiments/e1_attention/results/multi30k-luong-collapse/runs \
        experiments/e1_attention/results/multi30k-luong-collapse-sgd/runs
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

from seq2seq_lab.report.runs import Run, find_runs

COLLAPSED = 0.5  # the rule: mass on the last two source positions above one half


def optimiser(run: Run) -> str:
    """``Adam 0.001, clip 1.0``: the optimiser's class, learning rate and gradient-norm clip."""
    name = str(run.config_value("optim._target_", "?")).rsplit(".", 1)[-1]
    lr = run.config_value("optim.lr")
    clip = run.config_value("trainer.gradient_clip_val")
    return f"{name} {lr}, clip {clip}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="the study's sweep directories")
    args = parser.parse_args(argv)
    settings: dict[tuple, list] = defaultdict(list)
    for directory in args.runs:
        for run in find_runs(directory)[0]:
            alignment = run.results.get("alignment")
            if not run.finished or not alignment:
                continue
            key = (optimiser(run), run.config_value("model.bridge"),
                   run.config_value("model.attention.init_scale"))  # fmt: skip
            settings[key].append((run.seed, alignment, run.score("bleu")))
    print(f"Collapsed: mass on the last two source positions > {COLLAPSED} after 200 updates.\n")
    print("| optimiser | bridge | W_m scale | collapsed | seeds: mass on the last two "
          "(argmax share, H / log S, val BLEU) |")  # fmt: skip
    print("|---|---|---:|---:|---|")
    for (optim, bridge, scale), rows in sorted(settings.items(), key=lambda item: str(item[0])):
        rows.sort(key=lambda row: row[0])
        collapsed = sum(a["end_mass"] > COLLAPSED for _, a, _ in rows)
        per_seed = "; ".join(
            f"s{seed} **{a['end_mass']:.2f}** ({a['on_end']:.2f}, "
            f"{a['normalised_entropy']:.2f}, {bleu:.1f})"
            for seed, a, bleu in rows
        )
        print(f"| {optim} | {bridge} | {scale} | {collapsed} of {len(rows)} | {per_seed} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
