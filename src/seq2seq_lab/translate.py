"""Translate lines from stdin (or input=FILE) with a checkpoint:

echo "..." | python -m seq2seq_lab.translate ckpt_path=RUN/checkpoints/best.ckpt
"""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from seq2seq_lab.cli import refuse_command_line_mistakes, run_task
from seq2seq_lab.config import CONF_DIR  # importing config registers its resolvers


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="translate")
def compose_and_run(cfg: DictConfig) -> None:
    from seq2seq_lab.pipeline.translation import translate

    run_task(translate, cfg)


def main() -> None:
    refuse_command_line_mistakes("translate")
    compose_and_run()


if __name__ == "__main__":
    main()
