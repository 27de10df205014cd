#!/usr/bin/env bash
# The five-seed grid at `synthetic_v2` (conf/scale/synthetic_v2.yaml: version 2 of the synthetic
# task, five seeds a variant, about four hours on a 2-core CPU), as a resumable queue
# (run_real.sh: run again to continue, MINUTES ends a pass cleanly, JOBS and THREADS as
# there). Each comparison's cut of its grid at this scale is its sizes/synthetic_v2.yaml; E3
# and E5 are not in it (their cost: experiments/README.md). Runs and reports go to
# experiments/<name>/results/synthetic_v2/; a job identical to a finished run of another
# comparison reuses it (E1's plain, Bahdanau and Transformer are E2's forward, E7's GRU and
# E6's sinusoidal runs), so E1 goes first.
#   bash experiments/run_synthetic_v2.sh
#   MINUTES=170 bash experiments/run_synthetic_v2.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source experiments/python.sh
SCALE=synthetic_v2 DATA=synthetic_v2 exec bash experiments/run_real.sh \
  e1_attention e6_positions_heads e7_cells e2_reversal e4_norm_warmup
