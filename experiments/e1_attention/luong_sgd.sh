#!/usr/bin/env bash
# Luong with the paper's optimiser at E1's Multi30k budget (issue 51, item 3): the collapse
# study (luong_collapse.sh) found the cause in the optimiser (E1's Adam: 20 of 20 seeds
# collapsed within 200 updates; Luong et al. 2015's plain SGD at lr 1.0, gradient norm rescaled
# at 5: 0 of 5), but at 200 updates SGD was not ahead in BLEU. Before E1 and E3 change their
# Luong, this measures whether SGD, everything else E1's (1,600 updates, constant lr, the
# bridge, W_m, sizes), gets every seed near the uncollapsed Adam seed's 34.92 test BLEU.
# Seeds 1-3, paired with E1's committed Luong runs (results/multi30k/). Without E1's length
# probe and E8's study (the measurement is test BLEU and attention mass). A resumable queue
# (run_real.sh) into results/multi30k-luong-sgd/:
#   bash experiments/e1_attention/luong_sgd.sh
#   MINUTES=120 JOBS=1 THREADS=1 bash experiments/e1_attention/luong_sgd.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA=multi30k-luong-sgd \
OVERRIDES='model=luong optim=sgd optim.lr=1.0 trainer.gradient_clip_val=5 variant=luong_sgd length_probe=[] decoding_study=none' \
  exec bash experiments/run_real.sh e1_attention
