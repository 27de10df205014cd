"""Train a model, test its best checkpoint, write results.json.

python -m seq2seq_lab.train                                  # default model, synthetic task
python -m seq2seq_lab.train model=transformer model.norm=post schedule=noam
python -m seq2seq_lab.train -m experiment=e1_attention       # a whole comparison
python -m seq2seq_lab.train --help                           # the groups, options, experiments
"""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from seq2seq_lab.cli import refuse_command_line_mistakes, run_task
from seq2seq_lab.config import CONF_DIR  # importing config registers its resolvers


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="train")
def compose_and_run(cfg: DictConfig) -> float | None:
    from seq2seq_lab.pipeline.training import train

    results = run_task(train, cfg)
    # The value a sweeper (Optuna) maximises: best validation BLEU, None if the job failed.
    return (results or {}).get("training", {}).get("best_val_bleu")


def main() -> None:
    refuse_command_line_mistakes("train")
    compose_and_run()


if __name__ == "__main__":
    main()
