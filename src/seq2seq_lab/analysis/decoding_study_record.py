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


def summary_lines(record: Mapping) -> list[str]:
    """The study's record as a reader at a console wants it: per width and length penalty BLEU,
    output / reference length, empty outputs, mean log P(y | x) and time; per width (alpha 0)
    the search- and model-error shares; exact search's finished count and shares."""
    lines = [
        f"{STUDY} on {record['sentences']} sentences ({record.get('split', '?')}):",
        f"{'beam':>5} {'alpha':>5} {'BLEU':>6} {'len ratio':>9} {'empty':>6} {'log P':>7} "
        f"{'ms/sent':>7}",
    ]
    for row in record["settings"]:
        lines.append(
            f"{row['beam']:>5} {row['alpha']:>5g} {row['bleu']:>6.2f} {row['length_ratio']:>9.3f} "
            f"{row['empty']:>6.1%} {row['log_prob']:>7.2f} {1000 * row['seconds_per_sentence']:>7.1f}"
        )
    lines.append("search error / model error, alpha 0: " + "; ".join(
        f"beam {e['beam']} {e['search_error']:.1%} / {e['model_error']:.1%}"
        for e in record["errors"]))  # fmt: skip
    exact = record["exact"]
    line = f"exact search: {exact['finished']} of {exact['sentences']} sentences finished"
    if exact["finished"]:
        line += (
            f" ({exact['max_nodes']} nodes each at most); global best empty "
            f"{exact['empty_is_best']:.1%}; the beam's output the global best: "
            + ", ".join(f"beam {w} {s:.1%}" for w, s in exact["beam_is_best"].items())
        )
    lines.append(line)
    return lines
