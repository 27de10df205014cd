"""The decoding study (comparisons.md E8): one trained model decoded with every beam width and
length penalty, and its search errors told apart from its model errors.

For each beam width K and GNMT penalty alpha (score s / lp(|y|), lp = ((5 + |y|) / 6)^alpha;
K = 1 is greedy search, which no alpha changes, decoded once) over the same sentences:

- BLEU, chrF, the length ratio c / r (sacrebleu's 13a tokens), the share of empty outputs;
- the mean log-probability of the outputs, log P(y | x) = sum_t log p(y_t | y_<t, x), which is
  what the search maximises at alpha 0, and the seconds per sentence.

Errors (Stahlberg and Byrne 2019), per width, at alpha 0, where the search's objective is the
model's score. For sentence x with reference r and the beam's output y_K:

- ``correct``: y_K is the reference (same text);
- ``search error``: some output the study knows scores higher than y_K under the model: the
  reference, the output of another width, or exact search's global best (counted whether or
  not y_K is the reference: a search error may hide a model error);
- ``model error``: y_K is not the reference, yet the model scores it at least as high as the
  reference (log P(y_K) >= log P(r)): a better search would not have found the reference.

A sentence can hold both errors (y_K beats r, a wider beam beats y_K). Scores of outputs are the
search's own; the reference's is forced decoding's (one teacher-forced pass); they agree to
float rounding, hence the tolerance ``TIE``.

Exact search (decoding/exact.py) runs on the first ``exact_sentences`` sentences, bounded by the
best output the beams found, with ``exact_nodes`` decoder steps per sentence; of those it
finishes, the study records the share whose global best is the empty output, and per width the
share where the beam's output is the global best.

No Lightning here: :func:`decoding_study` takes the network and token ids.
"""

from __future__ import annotations

import difflib
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import torch

from seq2seq_lab.analysis.decoding_study_record import STUDY
from seq2seq_lab.data.batching import source_batch
from seq2seq_lab.decoding import DecodingSettings, decode
from seq2seq_lab.decoding.exact import exact_search, sequence_log_probs
from seq2seq_lab.decoding.hypotheses import gnmt_length_penalty, max_output_lengths
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.metrics.corpus import bleu_with_length, corpus_scores
from seq2seq_lab.models.network import Seq2SeqNetwork

TIE = 1e-4  # log-probabilities closer than this are equal (search vs forced-decoding rounding)


@dataclass(frozen=True, kw_only=True)
class StudySettings:
    """What the study decodes: the first ``sentences`` sentences of the tested split (all when
    None), with each of ``widths`` x ``alphas``; exact search on the first ``exact_sentences``
    of them, at most ``exact_nodes`` decoder steps each; ``batch_size`` sentences per decoder
    call (outputs do not depend on it; the time per sentence does)."""

    widths: tuple[int, ...]
    alphas: tuple[float, ...]
    sentences: int | None
    exact_sentences: int
    exact_nodes: int
    batch_size: int

    def __post_init__(self) -> None:
        if not self.widths or not all(_integer(w, 1) for w in self.widths):
            raise ConfigError(f"{STUDY}.widths must be integers >= 1, got {list(self.widths)}")
        if not self.alphas or not all(math.isfinite(a) for a in self.alphas):
            raise ConfigError(f"{STUDY}.alphas must be finite numbers, got {list(self.alphas)}")
        if 0.0 not in self.alphas:
            raise ConfigError(
                f"{STUDY}.alphas={list(self.alphas)} must hold 0: errors are measured where "
                "the search maximises the model's own score"
            )
        if self.sentences is not None and not _integer(self.sentences, 1):
            raise ConfigError(
                f"{STUDY}.sentences must be an integer >= 1 or null, got {self.sentences!r}"
            )
        for name, minimum in (("exact_sentences", 0), ("exact_nodes", 1), ("batch_size", 1)):
            if not _integer(getattr(self, name), minimum):
                raise ConfigError(
                    f"{STUDY}.{name} must be an integer >= {minimum}, got {getattr(self, name)!r}"
                )

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> StudySettings:
        """The ``decoding_study`` config section (a plain dict); an unknown or missing key is
        a ConfigError naming it (and, for a typo, the nearest key)."""
        names = [f.name for f in fields(cls)]
        for key in section:
            if key not in names:
                near = difflib.get_close_matches(str(key), names, n=1)
                hint = f" (did you mean {STUDY}.{near[0]}?)" if near else ""
                raise ConfigError(
                    f"{STUDY}.{key}: unknown setting{hint}; expected {', '.join(names)}"
                )
        missing = [name for name in names if name not in section]
        if missing:
            raise ConfigError(f"{STUDY}.{missing[0]} is missing (the study's settings are "
                              f"{', '.join(names)})")  # fmt: skip
        values = dict(section)
        values["widths"] = tuple(values["widths"] or ())
        values["alphas"] = tuple(
            float(a) if isinstance(a, int | float) and not isinstance(a, bool) else math.nan
            for a in values["alphas"] or ()
        )
        return cls(**values)


def _integer(value: Any, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


@dataclass
class _Decoded:
    tokens: list[list[int]]
    log_probs: list[float]  # log P(y | x) of each output
    seconds: float


def decoding_study(
    network: Seq2SeqNetwork,
    sources: Sequence[Sequence[int]],
    targets: Sequence[Sequence[int]],
    references: Sequence[str],
    detokenise: Callable[[Sequence[int]], str],
    base: DecodingSettings,
    settings: StudySettings,
) -> dict[str, Any]:
    """The study's record (module docstring). ``sources``/``targets``: token ids of each
    sentence and its reference (no BOS/EOS); ``references`` the reference texts; ``base`` the
    length limits and min_len every search keeps. The network must be in eval mode.

    Returns ``{"sentences", "settings": [...], "errors": [...], "exact": {...},
    "reference_log_prob", "hypotheses": {"K-alpha": [texts]}}``; the caller stores or drops
    the hypotheses."""
    n = len(sources) if settings.sentences is None else min(settings.sentences, len(sources))
    sources, targets, references = sources[:n], targets[:n], list(references[:n])
    decoded: dict[tuple[int, float], _Decoded] = {}
    for width in settings.widths:
        for alpha in settings.alphas if width > 1 else (0.0,):
            search = DecodingSettings(
                beam_size=width, length_penalty=alpha, max_len_a=base.max_len_a,
                max_len_b=base.max_len_b, min_len=base.min_len,
            )  # fmt: skip
            decoded[width, alpha] = _decode_all(network, sources, search, settings.batch_size)
    reference_scores = _reference_log_probs(network, sources, targets, settings.batch_size)

    rows, hypotheses = [], {}
    for width in settings.widths:
        for alpha in settings.alphas:
            found = decoded[width, alpha if width > 1 else 0.0]
            if label(width, 0.0) not in hypotheses or width > 1:
                texts = [detokenise(t) for t in found.tokens]
            hypotheses[label(width, alpha)] = texts  # greedy's texts once for every alpha
            finite = [s for s in found.log_probs if math.isfinite(s)]
            rows.append({
                "beam": width,
                "alpha": alpha,
                **corpus_scores(texts, references).as_dict(),
                **{k: v for k, v in bleu_with_length(texts, references).items() if k != "bleu"},
                "empty": sum(not t for t in found.tokens) / max(n, 1),
                "log_prob": sum(finite) / len(finite) if finite else float("-inf"),
                "seconds_per_sentence": found.seconds / max(n, 1),
            })  # fmt: skip

    exact = _exact(network, sources, decoded, settings, base)
    errors = _errors(decoded, hypotheses, settings.widths, reference_scores, references, exact)
    return {
        "sentences": n,
        "settings": rows,
        "errors": errors,
        "exact": exact["record"],
        "reference_log_prob": sum(reference_scores) / max(n, 1),
        "hypotheses": hypotheses,
    }


def label(width: int, alpha: float) -> str:
    """A setting's key in the outputs file: "5-0.6"."""
    return f"{width}-{alpha:g}"


def _decode_all(
    network: Seq2SeqNetwork, sources: Sequence[Sequence[int]], search: DecodingSettings, batch: int
) -> _Decoded:
    """Every sentence decoded, with its output's log-probability: greedy's scores are that
    already; a beam's are s / lp(|y|), |y| counting EOS when the output ended with one (it did
    unless the length limit cut it)."""
    tokens: list[list[int]] = []
    log_probs: list[float] = []
    started = time.perf_counter()
    for start in range(0, len(sources), batch):
        b = source_batch([list(s) for s in sources[start : start + batch]])
        with torch.inference_mode():
            hyps = decode(network, b.src, b.src_mask, search)
        limits = max_output_lengths(b.src_mask, search.max_len_a, search.max_len_b).tolist()
        for out, score, limit in zip(hyps.tokens, hyps.scores, limits):
            tokens.append(out)
            if search.beam_size > 1 and math.isfinite(score):
                length = len(out) + 1 if len(out) < limit else len(out)
                score *= gnmt_length_penalty(length, search.length_penalty)
            log_probs.append(score)
    return _Decoded(tokens, log_probs, time.perf_counter() - started)


def _reference_log_probs(
    network: Seq2SeqNetwork,
    sources: Sequence[Sequence[int]],
    targets: Sequence[Sequence[int]],
    batch: int,
) -> list[float]:
    scores: list[float] = []
    for start in range(0, len(sources), batch):
        b = source_batch([list(s) for s in sources[start : start + batch]])
        chunk = [list(t) for t in targets[start : start + batch]]
        scores.extend(sequence_log_probs(network, b.src, b.src_mask, chunk))
    return scores


def _exact(
    network: Seq2SeqNetwork,
    sources: Sequence[Sequence[int]],
    decoded: dict[tuple[int, float], _Decoded],
    settings: StudySettings,
    base: DecodingSettings,
) -> dict[str, Any]:
    """Exact search on the first sentences, each bounded by the best alpha-0 output found."""
    at_zero = [decoded[w, 0.0] for w in settings.widths]
    best: dict[int, tuple[float, list[int]]] = {}
    finished = 0
    empty = 0
    nodes = 0
    is_best = {w: 0 for w in settings.widths}
    tried = min(settings.exact_sentences, len(sources))
    started = time.perf_counter()
    for i in range(tried):
        bound = max(((d.log_probs[i], d.tokens[i]) for d in at_zero), key=lambda p: p[0])
        b = source_batch([list(sources[i])])
        result = exact_search(
            network, b.src, b.src_mask, max_nodes=settings.exact_nodes,
            max_len_a=base.max_len_a, max_len_b=base.max_len_b, min_len=base.min_len,
            bound=bound,
        )  # fmt: skip
        nodes += result.nodes
        if not result.finished:
            continue
        finished += 1
        best[i] = (result.score, result.tokens)
        empty += not result.tokens
        for w, d in zip(settings.widths, at_zero):
            is_best[w] += d.tokens[i] == result.tokens
    record = {
        "sentences": tried,
        "finished": finished,
        "max_nodes": settings.exact_nodes,
        "mean_nodes": nodes / tried if tried else 0.0,
        "seconds": time.perf_counter() - started,
        "empty_is_best": empty / finished if finished else None,
        "beam_is_best": {str(w): c / finished if finished else None for w, c in is_best.items()},
    }
    return {"record": record, "best": best}


def _errors(
    decoded: dict[tuple[int, float], _Decoded],
    hypotheses: dict[str, list[str]],
    widths: Sequence[int],
    reference_scores: list[float],
    references: list[str],
    exact: dict[str, Any],
) -> list[dict[str, Any]]:
    """Per width at alpha 0: the shares of sentences correct, with a search error, with a model
    error (module docstring)."""
    n = len(references)
    known = list(reference_scores)  # the best score known per sentence
    for w in widths:
        known = [max(k, s) for k, s in zip(known, decoded[w, 0.0].log_probs)]
    for i, (score, _) in exact["best"].items():
        known[i] = max(known[i], score)
    rows = []
    for w in widths:
        found, texts = decoded[w, 0.0], hypotheses[label(w, 0.0)]
        correct = search = model = 0
        for i in range(n):
            score = found.log_probs[i]
            search += known[i] > score + TIE  # whether or not the output is the reference
            if texts[i] == references[i]:
                correct += 1
            else:
                model += score >= reference_scores[i] - TIE
        rows.append({
            "beam": w,
            "correct": correct / max(n, 1),
            "search_error": search / max(n, 1),
            "model_error": model / max(n, 1),
        })  # fmt: skip
    return rows
