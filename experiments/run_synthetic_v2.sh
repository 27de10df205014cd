#!/usr/bin/env bash
# The five-seed grid at `synthetic_v2` (conf/scale/synthetic_v2.yaml: version 2 of the synthetic
# task, five seeds a variant), as a resumable queue (run_real.sh: run again to continue, MINUTES
# ends the call cleanly, JOBS and THREADS as there). Each comparison's cut of its grid at this
# scale is its sizes/synthetic_v2.yaml (E3's keeps its main check's three variants; E3 does
# not run at this scale, see below).
# Seven stages, each into experiments/<name>/results/<folder>/:
#   synthetic_v2       E1, E6, E2, E4, E5 at the scale's budgets (E1 4,000 updates);
#   synthetic_v2-8k    E1 again and E7 at 8,000 updates: at 4,000 E1's Bahdanau seeds had
#                      not converged (their attention jump came at 1,200-2,800 updates:
#                      e1_attention/NOTES.md), so E7, whose three cells are all Bahdanau
#                      models, runs at 8,000 only. E3 (all Luong models; its cut is
#                      declared) waited on E1's Luong (the fourth stage);
#   synthetic_v2-lr3e-3  E4 at the scale's Transformer lr (3e-3) and 4,000 updates, where E1's
#                      pre-LN Transformer with warmup converged (its five runs are reused): at
#                      lr 1e-3 no E4 variant had converged by 1,600, nor post-LN with warmup by
#                      8,000 (the two runs of an 8,000-update E4 grid stay in synthetic_v2-8k;
#                      e4_norm_warmup/NOTES.md).
#                      The first stage's E1 and E4 grids are kept as they are;
#   synthetic_v2-16k   E1's Luong at 16,000 updates: Luong had not converged by 8,000 with
#                      either score, and no other lr passed the rule by 4,000
#                      (e1_attention/NOTES.md; the wall-clock cap raised for runs this long).
#                      It did not converge by 16,000 either (late gain +1.1 ± 1.7), so plain
#                      seq2seq's runs at 16,000, for check (1) at equal updates, were stopped:
#                      (1) stays undecided whatever they give; E3 does not run at this scale;
#   synthetic_v2-lr3e-3-8k  E4 at lr 3e-3 again at 8,000 updates: at 4,000 pre-LN without
#                      warmup and post-LN with it still rose (e4_norm_warmup/NOTES.md);
#                      pre-LN with warmup is E1's 8,000-update Transformer, reused;
#   synthetic_v2-8k    (E5) E5's pair at 8,000 updates: its scaled model still rose at
#                      4,000 (e5_scaling/NOTES.md);
#   synthetic_v2-32k   E1's Luong, then plain seq2seq (check (1) at equal updates), at 32,000
#                      updates: the last budget declared for Luong (e1_attention/NOTES.md).
# A job identical to a finished run of another comparison in the same folder reuses it (E1's
# plain, Bahdanau and Transformer are E2's forward, E7's GRU and E6's sinusoidal runs), so E1
# goes first in each stage.
#   bash experiments/run_synthetic_v2.sh
#   MINUTES=170 bash experiments/run_synthetic_v2.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source experiments/python.sh
source experiments/queue.sh
deadline=$(queue_deadline)
SCALE=synthetic_v2 DATA=synthetic_v2 bash experiments/run_real.sh \
  e1_attention e6_positions_heads e2_reversal e4_norm_warmup e5_scaling
queue_next_stage run_synthetic_v2.sh synthetic_v2-8k || exit 0
SCALE=synthetic_v2 DATA=synthetic_v2-8k OVERRIDES=updates.synthetic_v2=8000 bash experiments/run_real.sh \
  e1_attention e7_cells
queue_next_stage run_synthetic_v2.sh synthetic_v2-lr3e-3 || exit 0
SCALE=synthetic_v2 DATA=synthetic_v2-lr3e-3 REUSE_DATA=synthetic_v2 \
  OVERRIDES="e4_lrs.synthetic_v2=3e-3 updates.synthetic_v2=4000" bash experiments/run_real.sh \
  e4_norm_warmup
queue_next_stage run_synthetic_v2.sh synthetic_v2-16k || exit 0
SCALE=synthetic_v2 DATA=synthetic_v2-16k \
  OVERRIDES="model=luong updates.synthetic_v2=16000 cpu_run_minutes=180" \
  bash experiments/run_real.sh e1_attention
queue_next_stage run_synthetic_v2.sh synthetic_v2-lr3e-3-8k || exit 0
SCALE=synthetic_v2 DATA=synthetic_v2-lr3e-3-8k REUSE_DATA=synthetic_v2-8k \
  OVERRIDES="e4_lrs.synthetic_v2=3e-3 updates.synthetic_v2=8000" bash experiments/run_real.sh \
  e4_norm_warmup
queue_next_stage run_synthetic_v2.sh "synthetic_v2-8k (E5)" || exit 0
SCALE=synthetic_v2 DATA=synthetic_v2-8k OVERRIDES="updates.synthetic_v2=8000 cpu_run_minutes=120" \
  bash experiments/run_real.sh e5_scaling
queue_next_stage run_synthetic_v2.sh synthetic_v2-32k || exit 0
SCALE=synthetic_v2 DATA=synthetic_v2-32k \
  OVERRIDES="model=luong,plain updates.synthetic_v2=32000 cpu_run_minutes=240" \
  exec bash experiments/run_real.sh e1_attention
