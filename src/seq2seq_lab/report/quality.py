"""The quality targets of the recurrent models on Multi30k: per family, the best
recipe found within 30 minutes of training (conf/recipe/rnn_multi30k_cpu.yaml), chosen on the
validation set only.

1. Search: every candidate (conf/recipe/rnn/<family>_<name>.yaml) trains once, seed 1.
2. Selection: per family, the candidate whose seed-1 run reached the highest best validation
   BLEU (greedy, every 200 updates); no test score is read to choose.
3. Confirmation: the chosen candidate trains again with seeds 2 and 3.

The quality table gives the chosen recipe's test2016 BLEU (beam 5, sacrebleu) as the mean over
its seeds; a target counts as met only with every confirmation seed finished:

    met(family) = seeds == {1, 2, 3} and mean_s BLEU_test(chosen, s) >= TARGETS[family]

The budget is the wall clock, so runs are comparable only on one kind of CPU, and the machines
handed out under one name differ in speed (experiments/recipe_quality/NOTES.md: CPU speeds).
The report names each run's CPU, and ``--check-cpu`` refuses (exit 2) a machine whose CPU
differs from the one the finished runs trained on, before a pass adds a run to them.

``python -m seq2seq_lab.report.quality RUNS [--out DIR] [--select | --check-cpu]``: the report,
or with ``--select`` the chosen candidate of each family, one per line, or with ``--check-cpu``
nothing unless this machine's CPU is not the runs' (experiments/run_quality.sh).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from seq2seq_lab.config import CONF_DIR  # importing config registers its resolvers
from seq2seq_lab.errors import UserError
from seq2seq_lab.record import environment
from seq2seq_lab.report.aggregate import mean_std
from seq2seq_lab.report.markdown import cpu_description, hardware, software, table
from seq2seq_lab.report.runs import Run, find_runs
from seq2seq_lab.training.budget import training_budget
from seq2seq_lab.training.convergence import CONVERGED_GAIN

EXPERIMENT = "rnn_multi30k_cpu"  # the recipe's experiment_name: the runs this report reads
TARGETS = {"bahdanau": 36.0, "luong": 34.0, "plain": 20.0}  # test2016 BLEU
FAMILY_NAMES = {"bahdanau": "Bahdanau", "luong": "Luong", "plain": "plain LSTM seq2seq"}
SEARCH_SEED = 1
SEEDS = (1, 2, 3)
REPORT = "quality.md"
TABLE_HEADING = "## Quality table (test2016 BLEU of the chosen recipe, beam 5)"


def candidates() -> list[str]:
    """Every candidate of the search: the files of conf/recipe/rnn/, by name."""
    return sorted(p.stem for p in (Path(CONF_DIR) / "recipe" / "rnn").glob("*.yaml"))


def searched(runs: Sequence[Run]) -> str:
    """How much of the search has finished ("6 of 13 candidates finished; not finished yet, so
    the choice is provisional: ..."): a choice made before every candidate has is provisional."""
    done = {candidate(r) for r in runs if r.seed == SEARCH_SEED and r.finished}
    wanted = candidates()
    missing = [name for name in wanted if name not in done]
    left = f"; not finished yet, so the choice is provisional: {', '.join(missing)}"
    return f"{len(done & set(wanted))} of {len(wanted)} candidates finished" + (
        left if missing else ""
    )


def best_val_bleu(run: Run) -> float | None:
    return (run.results.get("training") or {}).get("best_val_bleu")


def candidate(run: Run) -> str:
    """The candidate's name: its conf/recipe/rnn/ file (the run's variant)."""
    return run.variant


def select(runs: Sequence[Run]) -> dict[str, str]:
    """family -> the candidate with the highest best validation BLEU among the finished
    seed-1 runs (ties: the first name in order). Test scores are never read here."""
    best: dict[str, tuple[float, str]] = {}
    for run in sorted(runs, key=candidate):
        score = best_val_bleu(run)
        if run.seed != SEARCH_SEED or not run.finished or score is None or run.family is None:
            continue
        if run.family not in best or score > best[run.family][0]:
            best[run.family] = (score, candidate(run))
    return {family: name for family, (_, name) in sorted(best.items())}


def run_cpu(run: Run) -> str:
    """The CPU a run trained on: model name and instruction sets (markdown.cpu_description)."""
    return cpu_description(run.results.get("hardware") or {})


def cpus(runs: Sequence[Run]) -> list[str]:
    """The distinct CPUs the finished runs trained on, in the order first met."""
    return list(dict.fromkeys(run_cpu(run) for run in runs if run.finished))


def check_cpu(runs: Sequence[Run], here: str, where: str | Path) -> None:
    """Raise UserError when the finished runs (under ``where``) trained on a CPU other than
    ``here``: a run added on this machine would get another number of updates from its 30
    minutes than they did."""
    other = [cpu for cpu in cpus(runs) if cpu != here]
    if other:
        raise UserError(
            f"{where}: the finished runs trained on {'; '.join(other)}, this machine is {here}: a "
            "wall-clock budget compares candidates only on one CPU (ANY_CPU=1 runs anyway; "
            "the report names each run's CPU)"
        )


def _minutes(run: Run) -> float | None:
    seconds = run.timing("train_seconds")
    return seconds / 60 if seconds is not None else None


def _search_rows(runs: Sequence[Run], chosen: dict[str, str]) -> list[list[str]]:
    rows = []
    for run in sorted(runs, key=lambda r: (r.family or "", candidate(r))):
        if run.seed != SEARCH_SEED:
            continue
        score, minutes = best_val_bleu(run), _minutes(run)
        mark = "**chosen**" if chosen.get(run.family or "") == candidate(run) else ""
        rows.append(
            [
                FAMILY_NAMES.get(run.family or "", run.family or "?"),
                f"`{candidate(run)}`",
                run.status,
                f"{run.steps:,}" if run.steps is not None else "—",
                f"{minutes:.1f}" if minutes is not None else "—",
                f"{score:.2f}" if score is not None else "—",
                f"{gain:+.2f}" if (gain := run.late_val_gain) is not None else "—",
                run_cpu(run),
                mark,
            ]
        )
    return rows


def quality_rows(runs: Sequence[Run], chosen: dict[str, str]) -> list[list[str]]:
    """One row per family: the chosen recipe's test BLEU over its seeds and the target."""
    rows = []
    for family, name in chosen.items():
        mine = sorted(
            (r for r in runs if r.finished and r.family == family and candidate(r) == name),
            key=lambda r: r.seed or 0,
        )
        bleu = mean_std(r.score("bleu") for r in mine)
        seeds = {r.seed for r in mine}
        target = TARGETS.get(family)
        if target is None:
            verdict = "no target"
        elif not seeds >= set(SEEDS):
            verdict = f"not yet ({len(seeds & set(SEEDS))} of {len(SEEDS)} seeds)"
        else:
            verdict = "**met**" if bleu.mean is not None and bleu.mean >= target else "**missed**"
        per_seed = ", ".join(
            f"{r.seed}: {b:.2f}" for r in mine if (b := r.score("bleu")) is not None
        )
        rows.append(
            [
                FAMILY_NAMES.get(family, family),
                f"`recipe/rnn={name}`",
                bleu.format(2),
                per_seed or "—",
                mean_std(r.steps for r in mine).format(0),
                mean_std(_minutes(r) for r in mine).format(1),
                mean_std(r.late_val_gain for r in mine).format(2),
                "; ".join(cpus(mine)) or "—",
                f"{target:g}" if target is not None else "—",
                verdict,
            ]
        )
    return rows


def quality_markdown(runs: Sequence[Run]) -> str:
    chosen = select(runs)
    budgets = dict.fromkeys(training_budget(r.config.get("trainer") or {}) for r in runs)
    lines = [
        "# Recurrent models on Multi30k: the quality targets",
        "",
        "Each candidate trains within a wall-clock budget (validation, greedy, inside it) and "
        "tests its best-validation checkpoint on the test set with beam search (sacrebleu, "
        "cased, detokenised). Per family the candidate with the highest best validation BLEU "
        f"at seed {SEARCH_SEED} is chosen (test scores are not read for it) and trained again "
        f"with the other seeds of {', '.join(map(str, SEEDS))}. Rule and targets: "
        "`seq2seq_lab/report/quality.py`; candidates: `conf/recipe/rnn/`.",
        "",
        f"- **Runs:** {len(runs)} ({sum(r.finished for r in runs)} finished)",
        f"- **Search:** {searched(runs)}",
        f"- **Training budget:** {'; '.join(budgets) or 'not recorded'}",
        f"- **Hardware:** {hardware(runs)}",
        f"- **Software:** {software(runs)}",
        "",
        TABLE_HEADING,
        "",
        table(
            [
                "model",
                "recipe",
                "test BLEU",
                "per seed",
                "updates",
                "minutes of training",
                "val gain, last quarter",
                "CPU",
                "target",
                "target met",
            ],
            quality_rows(runs, chosen),
        )
        if chosen
        else "No candidate has finished yet.",
        "",
        "Val gain, last quarter: how much the best validation BLEU rose over the last quarter "
        "of the run's updates (`seq2seq_lab/training/convergence.py`); at "
        f"{CONVERGED_GAIN:g} or more the run was still improving when its budget ended: a "
        "target missed there was missed within the budget, not at the recipe's limit.",
        "",
        f"## Search (seed {SEARCH_SEED}), chosen on validation",
        "",
        table(
            [
                "model",
                "candidate",
                "status",
                "updates",
                "minutes of training",
                "best val BLEU (greedy)",
                "val gain, last quarter",
                "CPU",
                "",
            ],
            _search_rows(runs, chosen),
        ),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m seq2seq_lab.report.quality",
        description="The recurrent quality targets: the search's choice on validation and the "
        "chosen recipes' test BLEU over seeds (seq2seq_lab/report/quality.py).",
    )
    parser.add_argument("path", help="a folder of the search's and confirmation's runs")
    parser.add_argument("--out", default=None, help=f"where {REPORT} goes (default: PATH)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument(
        "--select", action="store_true", help="print the chosen candidate of each family"
    )
    action.add_argument(
        "--check-cpu",
        action="store_true",
        help="exit 2 if the finished runs trained on a CPU other than this machine's",
    )
    args = parser.parse_args(argv)
    if args.check_cpu and not Path(args.path).exists():
        return 0  # nothing has run yet: any machine may begin
    try:
        runs, _ = find_runs(args.path)
        runs = [r for r in runs if r.experiment == EXPERIMENT]
        if args.check_cpu:
            check_cpu(runs, cpu_description(environment.hardware()), args.path)
            return 0
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.select:
        print("\n".join(select(runs).values()))
        return 0
    out = Path(args.out or args.path)
    out.mkdir(parents=True, exist_ok=True)
    (out / REPORT).write_text(quality_markdown(runs), encoding="utf-8")
    print(f"wrote {out / REPORT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
