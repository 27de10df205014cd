#!/usr/bin/env bash
# E1's Luong at synthetic_v2: is its learning rate the reason it does not converge in 8,000
# updates? Luong's Adam lr at synthetic_v2 is version 1's, 8e-3 (conf/model_size/
# luong_synthetic.yaml), never chosen on version 2; with it the scaled score's five seeds still
# rose by 2.5 BLEU (mean) over the last quarter of 8,000 updates. The probe brackets 8e-3 by the
# sweep's factor of two each way: seeds 1 and 4, lr 4e-3 and 1.6e-2, 4,000 updates, everything
# else E1's Luong at synthetic_v2 (families/luong_synthetic_v2.yaml: the scaled score), without
# E8's study (the measurement is validation BLEU), into results/synthetic_v2-luong-lr/. 8e-3's
# two runs at 4,000 are the scaled probe's (results/synthetic_v2-luong-scaled/). The rule,
# declared before it ran (NOTES.md: "Luong's learning rate at synthetic_v2"): a rate replaces
# 8e-3 if its two runs' mean late gain is under 1 BLEU and their mean best validation BLEU is
# at least 8e-3's (71.93); of two such rates the higher mean best; otherwise 8e-3 stays.
#   bash experiments/e1_attention/luong_lr_synthetic_v2.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
SCALE=synthetic_v2 DATA=synthetic_v2-luong-lr \
OVERRIDES="model=luong seed=1,4 optim.lr=4e-3,1.6e-2 decoding_study=none" \
  exec bash experiments/run_real.sh e1_attention
