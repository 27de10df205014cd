#!/usr/bin/env bash
# E1's Luong at synthetic_v2: does the scaled general score (E1's Luong at Multi30k,
# families/luong_multi30k.yaml) learn what Luong's own unscaled score did not in 8,000 updates?
# With the unscaled score and E1's Adam, seeds 1-4 of the 8,000-update stage still rose 0.7-7.3
# BLEU over their last quarter (test 39.61-84.32; Bahdanau 89.64-92.89 on the same seeds). The
# probe: seeds 1 and 4 (the slowest unscaled ones), 4,000 updates, the scaled score, everything
# else E1's, without E8's study (the measurement is validation BLEU), into
# results/synthetic_v2-luong-scaled/. The rule, declared before it ran (NOTES.md: "Luong at
# synthetic_v2"): E1's Luong at synthetic_v2 takes the scaled score if on both seeds its best
# validation BLEU by 4,000 updates is above the unscaled run's by 8,000; otherwise it keeps
# Luong's own score and its 8,000-update runs stand.
#   bash experiments/e1_attention/luong_synthetic_v2.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
SCALE=synthetic_v2 DATA=synthetic_v2-luong-scaled \
OVERRIDES="model=luong seed=1,4 decoding_study=none model.attention.scaled=true variant=luong_scaled" \
  exec bash experiments/run_real.sh e1_attention
