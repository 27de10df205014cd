"""python -m seq2seq_lab.report PATH [--out DIR] [--scale SCALE]: write the reports of the runs
under PATH, or of the runs of a report's runs.csv (made again without the run directories)."""

from __future__ import annotations

import argparse
import logging
import sys

from seq2seq_lab.errors import UserError


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m seq2seq_lab.report",
        description="Turn runs (a sweep directory or a folder of runs, searched recursively "
        "for results.json) into one markdown report per comparison, with PNG plots. PATH may "
        "also be a report's runs.csv: the report is made again from its rows, keeping the "
        "PNGs an earlier report left in the output (none can be drawn from the table).",
    )
    parser.add_argument("path", help="a sweep directory, a folder of runs or a report's runs.csv")
    parser.add_argument(
        "--out",
        default=None,
        help="output directory (default: PATH/report; for a runs.csv the folder above its "
        "own, which makes the report again in place)",
    )
    parser.add_argument(
        "--scale",
        default=None,
        help="for a runs.csv only: the scale its runs were made at (synthetic, multi30k, ...), for tables "
        "written before runs.csv had a scale column",
    )
    parser.add_argument(
        "--experiment",
        action="append",
        default=None,
        help="only this experiment (repeatable; default: every experiment found)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from seq2seq_lab.report.generate import generate_report

    try:
        generated = generate_report(
            args.path,
            args.out,
            experiments=args.experiment,
            scale=args.scale,
        )
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for report in generated.reports:
        runs, verdict = len(report.assessment.comparison.runs), report.assessment.verdict
        print(f"{report.name}: {runs} runs, verdict {verdict.outcome} -> {report.path}")
    for name, error in generated.failed.items():
        print(f"error: the report of {name} could not be built: {error}", file=sys.stderr)
    if generated.debug:
        print(f"left out: {len(generated.debug)} debug runs (debug=...): listed in the index")
    for unreadable in generated.unreadable:
        print(f"warning: {unreadable.path}: unreadable ({unreadable.reason})", file=sys.stderr)
    print(f"index: {generated.index}")
    return 1 if generated.failed else 0


if __name__ == "__main__":
    sys.exit(main())
