"""The decoding study as a step after the test (``decoding_study=e8``): the tested checkpoint
decoded with every beam width and length penalty of the study's settings
(:mod:`seq2seq_lab.analysis.decoding_study`), so a grid records it without keeping checkpoints.
What it writes and where: :mod:`seq2seq_lab.analysis.decoding_study_record`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from seq2seq_lab.analysis.decoding_study import StudySettings, decoding_study
from seq2seq_lab.analysis.decoding_study_record import OUTPUTS, STUDY, write_outputs
from seq2seq_lab.training.module import Seq2SeqModule


def run_decoding_study(
    module: Seq2SeqModule, datamodule: Any, section: Mapping[str, Any], run_dir: Path
) -> dict[str, Any]:
    """The study on the tested split with the test decoding's length limits; writes the
    outputs file and returns the record without the hypotheses."""
    settings = StudySettings.from_config(section)
    sources, references = datamodule.raw_pairs(datamodule.split)
    limit = len(sources) if settings.sentences is None else settings.sentences
    sources, references = sources[:limit], references[:limit]
    tgt = datamodule.tgt_tokenizer
    was_training = module.training
    module.eval()
    try:
        with torch.inference_mode():
            record = decoding_study(
                module.network,
                [datamodule.encode_source(s) for s in sources],
                [tgt.encode(r) for r in references],
                references,
                tgt.decode,
                module.test_decoding,
                settings,
            )
    finally:
        module.train(was_training)
    write_outputs(run_dir / STUDY / OUTPUTS, record.pop("hypotheses"))
    record["split"] = datamodule.split
    record["decoding"] = module.test_decoding.to_dict()
    return record
