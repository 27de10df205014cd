"""Where the decoding study (:mod:`seq2seq_lab.analysis.decoding_study`) keeps what it found,
readable without torch (the report and the queue's run reuse read it).

results.json holds the study's record under :data:`STUDY`; RUN/decoding_study/outputs.json.gz
holds its outputs, each sentence's distinct outputs listed once and every setting pointing into
them (most settings agree on most sentences, so the file stays small).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path

# The study's name: its config key (``decoding_study``), its record in results.json and its
# directory in a run.
STUDY = "decoding_study"
OUTPUTS = "outputs.json.gz"


def write_outputs(path: Path, hypotheses: Mapping[str, list[str]]) -> None:
    """{"settings": [label, ...], "outputs": [[distinct texts of sentence i], ...],
    "choice": [[index into sentence i's outputs, per setting], ...]}, gzipped."""
    labels = list(hypotheses)
    outputs, choice = [], []
    for texts in zip(*(hypotheses[label] for label in labels)):
        distinct = list(dict.fromkeys(texts))
        outputs.append(distinct)
        choice.append([distinct.index(t) for t in texts])
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = json.dumps({"settings": labels, "outputs": outputs, "choice": choice})
    with gzip.GzipFile(path, "wb", mtime=0) as f:  # mtime 0: the same outputs, the same bytes
        f.write(payload.encode())


def read_outputs(path: Path) -> dict[str, list[str]]:
    """{setting label: the outputs of every sentence}: what :func:`write_outputs` wrote."""
    with gzip.open(path, "rt") as f:
        data = json.load(f)
    return {
        label: [outs[picks[k]] for outs, picks in zip(data["outputs"], data["choice"])]
        for k, label in enumerate(data["settings"])
    }
