#!/usr/bin/env bash
# What the papers' initialisation changes on Multi30k (issue 51, item 2): the runs of the
# committed Multi30k grids that it may drive, made again under model.init=paper (the default
# since; the committed runs were made under model.init=xavier), with the same seeds, budgets
# and sizes, into results/multi30k-paper-init/ beside each grid's committed results/multi30k/:
#   E4 post-LN 6+6 with warmup (3.16 BLEU under xavier, a stall the papers' post-LN does not
#   show) and E6 learned and sinusoidal positions (learned 1.90 below sinusoidal under xavier,
#   its table 0.13-0.18 of the token signal).
# Each pairs seed by seed with the committed run of the same setting; before reading a pair,
# check that the code since has not changed what a seed produces (re-make one xavier run and
# compare its validation curve with the committed one: NOTES of each experiment).
# A resumable queue (run_real.sh): run again to continue; MINUTES ends a pass cleanly.
#   bash experiments/paper_init_multi30k.sh                # E4's runs, then E6's
#   MINUTES=150 bash experiments/paper_init_multi30k.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA=multi30k-paper-init
OVERRIDES='model.init=paper model.norm=post schedule.linear_warmup=true model.encoder_layers=6' \
  bash experiments/run_real.sh e4_norm_warmup
OVERRIDES='model.init=paper experiment/e6_positions_heads=sinusoidal,learned' \
  bash experiments/run_real.sh e6_positions_heads
