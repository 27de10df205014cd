"""E8 decoding, on E1's runs: beam width and length penalty, the beam-search curse, and search
errors against model errors (Britz et al. 2017; Koehn and Knowles 2017; Stahlberg and Byrne
2019). Nothing is trained for it: each E1 run decodes its tested checkpoint with every width
and penalty right after its test (``decoding_study=e8``, seq2seq_lab/analysis/decoding_study.py)
and records ``decoding_study`` in results.json, its outputs in
RUN/decoding_study/outputs.json.gz.

Every check compares two decoders of the same models, so the seeds pair by construction; the
outputs of both on the same sentences give the test-sentence term (``report/evidence.py``).
With B(K, a) a run's BLEU at beam width K and GNMT alpha a (K = 1: greedy) and L(K, a) its
output / reference length (13a tokens):

- beam 5 better than greedy: B(5, 0) - B(1, 0) >= GAIN;
- the curse: B(100, 0) - B(5, 0) <= -CURSE. The published peak is at a modest width; the peak
  of these runs is read at the suite's test width 5, since choosing it where BLEU is highest
  would pick it on the test set;
- the length falls with the width: L(100, 0) - L(1, 0) <= -SHORTER;
- the penalty softens the fall: [B(5, 0) - B(100, 0)] - [B(5, 1) - B(100, 1)] >= SOFTER.

Each is judged on every model that converged (``training/convergence.py``'s rule, as every
comparison): the published findings are about trained models, and a model still improving may
search differently once trained. A model left short of it by design (E1's plain seq2seq, held
to the attention models' budget) is named beside the check and not judged, instead of
leaving every check undecided for as long as E1 holds it there; with no model converged a check
is undecided.

Every check is tested only where search has something to find (``SEARCH_ROOM``): on a model
whose greedy output is already its best for nearly every sentence, no width can do better or
worse, and a check there would score a published finding that was never tested. Unmet, every
check is undecided with that reason.

Each read at its 95 % interval. The published effects are 0.2-1 BLEU, so the margins are small:
they only keep a check from holding on two decoders that give the same outputs (a difference
of exactly 0 with no spread), which a converged model on an easy task can do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from experiments.e1_attention.spec import SPEC as E1
from seq2seq_lab.analysis.decoding_study_record import OUTPUTS, STUDY, read_outputs
from seq2seq_lab.report.aggregate import Variant, mean_std
from seq2seq_lab.report.checks import (
    NOT_CONVERGED,
    decided,
    difference_text,
    every_case,
    family_order,
    family_role,
    missing_runs,
)
from seq2seq_lab.report.evidence import (
    Measure,
    combine,
    resampled_bleu,
    resampled_length_ratio,
)
from seq2seq_lab.report.plots import line_label, save
from seq2seq_lab.report.rules import Claim
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import (
    Check,
    Comparison,
    ExperimentSpec,
    Finding,
    Precondition,
    Table,
)

RECORD = STUDY
TEST_WIDTH = 5  # the suite's test beam (conf/decoding/beam.yaml): Britz et al.'s 5-10
WIDEST = 100  # the widest beam every scale decodes (conf/decoding_study/e8.yaml)
PENALTY = 1.0  # the GNMT alpha whose softening of the curse is checked
# Margins (module docstring): a tenth of Britz et al.'s greedy-to-beam-5 gain (+0.94 BLEU) and
# a fifth of their beam-5-to-100 fall (-0.50); half a percent of output length
GAIN = 0.1
CURSE = 0.1
SHORTER = 0.005
SOFTER = 0.1
# The precondition of every check: beam search can only change what greedy search outputs
# where greedy's output is not the model's best, so each judged model must leave search that
# room on at least this share of the sentences exact search finished (mean over seeds). A
# model whose greedy output is its best nearly everywhere has nothing for a wider beam to find,
# better or worse; one sentence in twenty is the least room in which a difference of the
# margins above could be a search effect and not a handful of sentences.
SEARCH_ROOM = 0.05

Setting = tuple[int, float]  # (beam width, alpha)


def label(setting: Setting) -> str:
    """The outputs file's key of a setting: "5-0.6"."""
    return f"{setting[0]}-{setting[1]:g}"


def row(run: Run, setting: Setting) -> dict | None:
    """The study's row of ``setting`` in a finished run, or None."""
    if not run.finished:
        return None
    for entry in (run.results.get(RECORD) or {}).get("settings") or []:
        if (entry["beam"], float(entry["alpha"])) == (setting[0], float(setting[1])):
            return entry
    return None


@cache
def _outputs(path: Path) -> dict[str, list[str]] | None:
    file = path / RECORD / OUTPUTS
    return read_outputs(file) if file.is_file() else None


def _references(run: Run) -> list[str] | None:
    """The references of the sentences the study decoded (the first ones of the test split)."""
    n = (run.results.get(RECORD) or {}).get("sentences")
    references = run.test_lines("references")
    return None if n is None or references is None or len(references) < n else references[:n]


# A figure of one run under one setting: (its value, its value on every resample or None)
Figured = tuple[float, np.ndarray | None]


def figured(
    key: str, resampled: Callable[[list[str], list[str]], np.ndarray]
) -> Callable[[Setting], Callable[[Run], Figured | None]]:
    """The figure ``key`` of a setting's row, with ``resampled`` of its outputs where the run
    kept them (the test-sentence term)."""

    def of(setting: Setting) -> Callable[[Run], Figured | None]:
        def figure(run: Run) -> Figured | None:
            entry = row(run, setting)
            if entry is None:
                return None
            outputs, references = _outputs(run.path), _references(run)
            hypotheses = (outputs or {}).get(label(setting))
            if hypotheses is None or references is None or len(hypotheses) != len(references):
                return float(entry[key]), None
            return float(entry[key]), resampled(hypotheses, references)

        return figure

    return of


bleu = figured("bleu", resampled_bleu)
length_ratio = figured("length_ratio", resampled_length_ratio)


def minus(a: Callable[[Run], Figured | None], b: Callable[[Run], Figured | None]):
    """The figure a - b of one run, resample by resample."""

    def figure(run: Run) -> Figured | None:
        x, y = a(run), b(run)
        if x is None or y is None:
            return None
        rows = None if x[1] is None or y[1] is None else x[1] - y[1]
        return x[0] - y[0], rows

    return figure


def decoders(
    c: Comparison,
    model: Variant,
    name: str,
    baseline: tuple[str, Callable[[Run], Figured | None]],
    system: tuple[str, Callable[[Run], Figured | None]],
    claim: Claim,
) -> Finding:
    """``claim`` of system - baseline, two figures of the same runs, paired by seed, with the
    test-sentence term where every run kept its outputs."""
    runs = sorted((r for r in model.runs if r.finished), key=lambda r: r.seed or 0)
    pairs = [(a, b) for a, b in ((baseline[1](r), system[1](r)) for r in runs) if a and b]
    text = f"{model.label}: {system[0]} - {baseline[0]}"
    if not pairs:
        return missing_runs(f"the decoding study of {model.label}")
    with_rows = all(a[1] is not None and b[1] is not None for a, b in pairs)
    sentences = run_sentences(runs) if with_rows else None
    d = combine(
        (baseline[0], [a[0] for a, _ in pairs], [a[1] for a, _ in pairs] if with_rows else None),
        (system[0], [b[0] for _, b in pairs], [b[1] for _, b in pairs] if with_rows else None),
        paired=len(pairs) > 1,
        measure=Measure(name, lambda run: None, lambda run: None),
        sentences=sentences,
        same_models=True,
    )
    detail = f"{text} {difference_text(claim, d)}"
    return decided(claim, d, detail, text)


def run_sentences(runs: list[Run]) -> int | None:
    """The sentences every run's study decoded, when they are the same number."""
    counts = {(r.results.get(RECORD) or {}).get("sentences") for r in runs}
    return counts.pop() if len(counts) == 1 else None


def _studied(c: Comparison) -> list[Variant]:
    return [v for v in c.variants if any(row(r, (1, 0.0)) for r in v.runs)]


def _each_model(c: Comparison, case: Callable[[Variant], Finding]) -> Finding:
    """``case`` judged on every converged model with a study; the others are named, not judged
    (module docstring), and with none converged the check is undecided."""
    studied = _studied(c)
    still = {id(m): c.unconverged([m]) for m in studied}
    left_out = [reason for m in studied for reason in still[id(m)]]
    judged = [m for m in studied if not still[id(m)]]
    if studied and not judged:
        return Finding(None, "no model converged", why=f"{NOT_CONVERGED}: " + ", ".join(left_out))
    prefix = f"left out, not converged: {', '.join(left_out)}; " if left_out else ""
    return every_case([case(m) for m in judged], "the decoding study of an E1 model", prefix)


def search_room(model: Variant) -> float | None:
    """The share of the sentences exact search finished on which greedy's output is not the
    model's best (1 - exact["beam_is_best"]["1"]), mean over seeds; None without exact search."""
    shares = []
    for run in model.runs:
        exact = (run.results.get(RECORD) or {}).get("exact") if run.finished else None
        best = (exact or {}).get("beam_is_best") or {}
        if best.get("1") is not None:  # None: exact search finished no sentence
            shares.append(1.0 - float(best["1"]))
    return float(np.mean(shares)) if shares else None


def _no_room(c: Comparison) -> str | None:
    """Why the models the checks would judge leave search no room (the precondition), or
    None: the converged models, or with none converged every studied one (the room is the
    model's and the task's, not a matter of more training: it is read before the gate)."""
    studied = _studied(c)
    judged = [m for m in studied if not c.unconverged([m])] or studied
    short = []
    for model in judged:
        room = search_room(model)
        if room is None:
            short.append(f"{model.label} (no exact search recorded)")
        elif room < SEARCH_ROOM:
            short.append(f"{model.label} {room:.1%}")
    if not short:
        return None
    return (
        f"greedy's output is not the model's best on fewer than {SEARCH_ROOM:.0%} of the "
        "sentences exact search finished: " + ", ".join(short)
    )


ROOM = Precondition(
    f"greedy's output is not the model's best on at least {SEARCH_ROOM:.0%} of the sentences "
    "exact search finished, for every model judged (with none converged, every model "
    "studied; else search has nothing to find)",
    _no_room,
)


def _beam_beats_greedy(c: Comparison) -> Finding:
    greedy, beam = (1, 0.0), (TEST_WIDTH, 0.0)
    return _each_model(c, lambda m: decoders(
        c, m, "BLEU", ("greedy", bleu(greedy)), (f"beam {TEST_WIDTH}", bleu(beam)),
        Claim("at least", GAIN)))  # fmt: skip


def _curse(c: Comparison) -> Finding:
    modest, wide = (TEST_WIDTH, 0.0), (WIDEST, 0.0)
    return _each_model(c, lambda m: decoders(
        c, m, "BLEU", (f"beam {TEST_WIDTH}", bleu(modest)), (f"beam {WIDEST}", bleu(wide)),
        Claim("at most", -CURSE)))  # fmt: skip


def _shorter(c: Comparison) -> Finding:
    greedy, wide = (1, 0.0), (WIDEST, 0.0)
    return _each_model(c, lambda m: decoders(
        c, m, "length ratio", ("greedy", length_ratio(greedy)),
        (f"beam {WIDEST}", length_ratio(wide)), Claim("at most", -SHORTER)))  # fmt: skip


def _softened(c: Comparison) -> Finding:
    def fall(alpha: float) -> Callable[[Run], Figured | None]:
        return minus(bleu((TEST_WIDTH, alpha)), bleu((WIDEST, alpha)))

    return _each_model(c, lambda m: decoders(
        c, m, "BLEU fall", (f"fall at alpha {PENALTY:g}", fall(PENALTY)),
        ("fall at alpha 0", fall(0.0)), Claim("at least", SOFTER)))  # fmt: skip


# ---------------------------------------------------------------------------- tables
def _settings(c: Comparison) -> tuple[list[int], list[float]]:
    seen = {(e["beam"], float(e["alpha"])) for v in _studied(c) for r in v.runs if r.finished
            for e in (r.results.get(RECORD) or {}).get("settings") or []}  # fmt: skip
    return sorted({w for w, _ in seen}), sorted({a for _, a in seen})


def _mean(model: Variant, setting: Setting, key: str) -> str:
    values = [float(e[key]) for e in (row(r, setting) for r in model.runs) if e is not None]
    return mean_std(values).format(3 if key in ("length_ratio", "empty") else 2) if values else "—"


FIGURES = (("BLEU", "bleu"), ("chrF", "chrf"), ("length ratio", "length_ratio"),
           ("empty share", "empty"), ("log P(y | x)", "log_prob"),
           ("ms / sentence", "seconds_per_sentence"))  # fmt: skip


def per_setting_rows(c: Comparison) -> tuple[list[str], list[list[str]]]:
    widths, alphas = _settings(c)
    if not widths:
        return [], []
    header = ["model", "alpha", "figure"] + [f"K={w}" for w in widths]
    rows = []
    for model in _studied(c):
        for alpha in alphas:
            for name, key in FIGURES:
                cells = []
                for w in widths:
                    cell = _mean(model, (w, alpha), key)
                    if key == "seconds_per_sentence" and cell != "—":
                        values = [1000 * float(row(r, (w, alpha))[key]) for r in model.runs
                                  if row(r, (w, alpha))]  # fmt: skip
                        cell = mean_std(values).format(1)
                    cells.append(cell)
                rows.append([f"**{model.label}**", f"{alpha:g}", name, *cells])
    return header, rows


def errors_rows(c: Comparison) -> tuple[list[str], list[list[str]]]:
    widths, _ = _settings(c)
    if not widths:
        return [], []
    header = ["model", "share of sentences"] + [f"K={w}" for w in widths]
    rows = []
    for model in _studied(c):
        per_run = [{e["beam"]: e for e in (r.results.get(RECORD) or {}).get("errors") or []}
                   for r in model.runs if r.finished]  # fmt: skip
        for name, key in (("correct", "correct"), ("search error", "search_error"),
                          ("model error", "model_error")):  # fmt: skip
            cells = []
            for w in widths:
                values = [float(e[w][key]) for e in per_run if w in e]
                cells.append(mean_std(values).format(3) if values else "—")
            rows.append([f"**{model.label}**", name, *cells])
    return header, rows


def exact_rows(c: Comparison) -> tuple[list[str], list[list[str]]]:
    widths, _ = _settings(c)
    if not widths:
        return [], []
    header = ["model", "seed", "finished / tried", "nodes (mean)", "empty is best"] + [
        f"K={w} is best" for w in widths
    ]
    rows = []
    for model in _studied(c):
        for run in sorted((r for r in model.runs if r.finished), key=lambda r: r.seed or 0):
            exact = (run.results.get(RECORD) or {}).get("exact")
            if not exact:
                continue
            share = lambda x: "—" if x is None else f"{x:.3f}"  # noqa: E731
            best = exact.get("beam_is_best") or {}
            rows.append([
                f"**{model.label}**", str(run.seed),
                f"{exact['finished']} / {exact['sentences']} (budget {exact['max_nodes']:,})",
                f"{exact['mean_nodes']:.0f}", share(exact.get("empty_is_best")),
                *[share(best.get(str(w))) for w in widths],
            ])  # fmt: skip
    return header, rows


# ---------------------------------------------------------------------------- plots
@dataclass(frozen=True)
class AgainstWidth:
    """A figure of the study against the beam width (log scale), one line per model and
    alpha, mean over seeds with the std as error bars."""

    key: str
    ylabel: str
    name: str
    caption: str

    def draw(self, comparison: Comparison, out_dir: Path) -> list[Path]:
        widths, alphas = _settings(comparison)
        if not widths:
            return []
        figure = Figure(figsize=(7.5, 4.5), layout="constrained")
        ax = figure.add_subplot()
        styles = ("-", "--", ":", "-.")
        for model in _studied(comparison):
            for i, alpha in enumerate(alphas):
                points = []
                for w in widths:
                    values = [float(e[self.key]) for e in (row(r, (w, alpha)) for r in model.runs)
                              if e is not None]  # fmt: skip
                    if values:
                        points.append((w, np.mean(values), np.std(values)))
                if points:
                    ax.errorbar([p[0] for p in points], [p[1] for p in points],
                                yerr=[p[2] for p in points], marker="o", capsize=3,
                                linestyle=styles[i % len(styles)],
                                label=f"{line_label(model, None)}, alpha {alpha:g}")  # fmt: skip
        ax.set_xscale("log")
        ax.set_xticks(widths, [str(w) for w in widths])
        ax.set_xlabel("beam width K (1: greedy)")
        ax.set_ylabel(self.ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        return [save(figure, out_dir / f"{self.name}.png")]


SPEC = ExperimentSpec(
    name="e8_decoding",
    title="E8 decoding: beam width, length penalty, search and model errors",
    headline="beam 5 beats greedy; wider beams, no penalty: shorter, worse",
    published=(
        "Britz et al. 2017 (WMT15 en-de): greedy 20.66, beam 5 21.60, beam 100 21.10 BLEU "
        "without a length penalty; beam 10 with alpha 1.0 +0.23 over beam 10 without. Koehn "
        "and Knowles 2017: BLEU peaks at a modest beam and falls beyond, the outputs getting "
        "shorter; length normalisation softens the fall. Stahlberg and Byrne 2019 (WMT news, "
        "Transformer): exact search finds the empty output the model's best for about half of "
        "the sentences."
    ),
    expected=(
        "On each E1 model: beam 5 above greedy; beam 100 without a penalty below beam 5, with "
        "shorter outputs than greedy; the penalty shrinking the fall from beam 5 to 100."
    ),
    role=family_role,
    order=family_order,
    checks=(
        Check(
            f"every converged model: beam {TEST_WIDTH} better than greedy, B({TEST_WIDTH}, 0) - B(1, 0) "
            f"(95 % interval's lower end >= {GAIN:g}, paired by seed, test sentences counted)",
            _beam_beats_greedy,
            precondition=ROOM,
            main=True,
        ),
        Check(
            f"every converged model: beam {WIDEST} below beam {TEST_WIDTH} without a penalty, "
            f"B({WIDEST}, 0) - B({TEST_WIDTH}, 0) (95 % interval's upper end <= -{CURSE:g})",
            _curse,
            precondition=ROOM,
        ),
        Check(
            f"every converged model: outputs shorter at beam {WIDEST} than greedy without a penalty, "
            f"L({WIDEST}, 0) - L(1, 0) (95 % interval's upper end <= -{SHORTER:g})",
            _shorter,
            precondition=ROOM,
        ),
        Check(
            f"every converged model: alpha {PENALTY:g} softens the fall from beam {TEST_WIDTH} to "
            f"{WIDEST}, [B({TEST_WIDTH}, 0) - B({WIDEST}, 0)] - [B({TEST_WIDTH}, {PENALTY:g}) - "
            f"B({WIDEST}, {PENALTY:g})] (95 % interval's lower end >= {SOFTER:g})",
            _softened,
            precondition=ROOM,
        ),
    ),
    floor=E1.floor,
    plots=(
        AgainstWidth(
            "bleu",
            "BLEU",
            "bleu_by_width",
            "BLEU against the beam width, per model and alpha (mean over seeds, bars: std)",
        ),
        AgainstWidth(
            "length_ratio",
            "output / reference length",
            "length_by_width",
            "Output / reference length (13a tokens) against the beam width",
        ),
        AgainstWidth(
            "empty",
            "share of empty outputs",
            "empty_by_width",
            "Share of empty outputs against the beam width",
        ),
    ),  # fmt: skip
    tables=(
        Table(
            "Every width and penalty",
            per_setting_rows,
            note="mean ± std over seeds; K = 1 is greedy search (no alpha changes it); "
            "log P(y | x) the outputs' mean log-probability under the model",
        ),
        Table(
            "Search errors and model errors (alpha 0)",
            errors_rows,
            note="correct: the output is the reference; search error: an output the study "
            "knows (the reference, another width's, exact search's) scores higher; "
            "model error: a wrong output the model scores at least as high as the "
            "reference. A sentence may hold both.",
        ),
        Table(
            "Exact search",
            exact_rows,
            note="depth-first search bounded by the beams' best output; of the sentences "
            "it finished within the node budget, the share whose global best is the "
            "empty output and the share where each width's output is the global best",
        ),
    ),  # fmt: skip
    reads=E1.name,
    needs_record=RECORD,
)
