"""One comparison side by side in the W&B app: a workspace (a saved view of the project)
built with W&B's own API, ``wandb_workspaces`` (``pip install -e '.[wandb]'``).

The view shows the runs of one experiment (W&B group), one row per variant (job type) with
its seeds folded in (run names ``experiment/variant/seed=N``, ``wandb_identity.py``):

    runs table   filter group = <experiment> (and config scale = <scale>), grouped by
                 job type; pinned columns: every figure of ``wandb_record`` (test scores,
                 best validation BLEU and its step, late gain, steps, stopped by, status)
    Test scores  a bar per variant of test/bleu, test/chrf, test/ter: the mean over
                 seeds, the bar's range their min and max
    BLEU by source length  the same bars for each length bucket of the test split
    Training     val/bleu and train/loss over updates (mean and min-max band per variant);
                 late_val_gain per variant (the protocol's convergence check)
    Test hypotheses  the runs' test/hypotheses tables, and the runs' configs side by side
                 (differences only)

Usage (``--save`` needs a W&B key; without it the view is only written as JSON, which is what
``--save`` would upload, for a look or a test offline):

    python -m seq2seq_lab.loggers.wandb_workspace e2_reversal --entity ME --scale synthetic --save
    python -m seq2seq_lab.loggers.wandb_workspace e2_reversal --entity ME --out view.json
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from seq2seq_lab.checkout import CONF_DIR
from seq2seq_lab.loggers.wandb_identity import ADHOC_GROUP
from seq2seq_lab.loggers.wandb_record import FIGURE_KEYS, HYPOTHESES_KEY, TEST_FIGURES, bucket_key
from seq2seq_lab.metrics.length_buckets import DEFAULT_EDGES, bucket_label

STEP = "trainer/global_step"  # the x axis of every curve: optimiser updates (Lightning's)
VARIANT = "JobType"  # W&B's run attribute that holds the variant
# every run of a grid in each panel (the app's default shows the first 10, fewer than some grids)
MAX_RUNS = 100
SEEDS_FOLDED = {"groupby": VARIANT, "groupby_aggfunc": "mean", "groupby_rangefunc": "minmax"}


def length_buckets() -> list[str]:
    """Every bucket label ``bleu_by_length`` can write (empty buckets are not logged)."""
    return [bucket_label(edge) for edge in DEFAULT_EDGES] + [bucket_label(DEFAULT_EDGES[-1] + 1)]


def pinned_columns() -> list[str]:
    """The runs table's columns: every figure of the run summary that is not per bucket."""
    return [f"summary:{k}" for k in FIGURE_KEYS]


def comparison_workspace(
    experiment: str, *, entity: str, project: str, scale: str | None = None
) -> Any:
    """The ``wandb_workspaces.workspaces.Workspace`` of ``experiment`` (module docstring),
    of the runs at ``scale`` only when it is given."""
    import wandb_workspaces.reports.v2 as wr
    import wandb_workspaces.workspaces as ws
    from wandb_workspaces import expr

    def bars(title: str, keys: list[str]) -> Any:
        return wr.BarPlot(
            title=title,
            metrics=[wr.SummaryMetric(k) for k in keys],
            orientation="v",
            **SEEDS_FOLDED,
        )

    def curve(title: str, key: str, **extra: Any) -> Any:
        return wr.LinePlot(title=title, x=STEP, y=[key], **SEEDS_FOLDED, **extra)

    filters = [expr.Metric("Group") == experiment]
    if scale is not None:
        filters.append(expr.Config("scale") == scale)
    sections = [
        ("Test scores", [bars(f"test {k}", [f"test/{k}"]) for k in TEST_FIGURES]),
        (
            "BLEU by source length",
            [
                bars(
                    "test BLEU by source length (words)",
                    [bucket_key(b, "bleu") for b in length_buckets()],
                )
            ],
        ),
        (
            "Training",
            [
                curve("validation BLEU", "val/bleu"),
                curve("training loss", "train/loss", log_y=True),
                bars("late gain of validation BLEU", ["training/late_val_gain"]),
            ],
        ),
        (
            "Test hypotheses",
            [
                wr.WeavePanelSummaryTable(table_name=HYPOTHESES_KEY),
                wr.RunComparer(diff_only="split"),
            ],
        ),
    ]
    return ws.Workspace(
        entity=entity,
        project=project,
        name=f"{experiment} side by side" + (f" ({scale})" if scale else ""),
        sections=[ws.Section(name=n, panels=p, is_open=True) for n, p in sections],
        settings=ws.WorkspaceSettings(x_axis=STEP, max_runs=MAX_RUNS),
        runset_settings=ws.RunsetSettings(
            filters=filters,
            groupby=[expr.Metric(VARIANT)],
            pinned_columns=pinned_columns(),
            order=[expr.Ordering(expr.Metric("Name"))],
        ),
    )


def view_spec(workspace: Any) -> dict[str, Any]:
    """The view as W&B stores it: what ``Workspace.save()`` uploads (the library has no public
    name for it; its ``_to_model`` is what ``save`` calls)."""
    return json.loads(workspace._to_model().model_dump_json(by_alias=True, exclude_none=True))


def configured(key: str) -> Any:
    """``logger.wandb.<key>`` as conf/logger/wandb.yaml sets it (the one home of the value)."""
    return OmegaConf.load(Path(CONF_DIR) / "logger" / "wandb.yaml").wandb[key]


def main(argv: list[str] | None = None) -> None:
    from seq2seq_lab.experiment_folders import experiments

    groups = [*experiments(), ADHOC_GROUP]
    parser = argparse.ArgumentParser(
        prog="python -m seq2seq_lab.loggers.wandb_workspace",
        description="A W&B workspace that shows one comparison's runs side by side.",
    )
    parser.add_argument("experiment", help=f"the W&B group: {', '.join(groups)}")
    parser.add_argument("--entity", default=configured("entity"), help="W&B user or team")
    parser.add_argument("--project", default=configured("project"))
    parser.add_argument("--scale", help="only the runs at this scale (synthetic, multi30k, ...)")
    parser.add_argument("--out", type=Path, help="write the view (JSON) to this file")
    parser.add_argument("--save", action="store_true", help="save the view to W&B (needs a key)")
    args = parser.parse_args(argv)
    if args.experiment not in groups:
        close = difflib.get_close_matches(args.experiment, groups, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        parser.error(f"experiment={args.experiment}: not a comparison{hint}; one of {groups}")
    if not args.entity:
        parser.error("--entity: the W&B user or team the view belongs to (logger.wandb.entity)")
    try:
        workspace = comparison_workspace(
            args.experiment, entity=args.entity, project=args.project, scale=args.scale
        )
    except ImportError:
        parser.error("wandb_workspaces is not installed: pip install -e '.[wandb]'")
    spec = json.dumps(view_spec(workspace), indent=1)
    if args.out:
        args.out.write_text(spec + "\n", encoding="utf-8")
        print(f"view written to {args.out}")
    if args.save:
        print(f"view saved: {workspace.save().url}")
    if not (args.out or args.save):
        sys.stdout.write(spec + "\n")


if __name__ == "__main__":
    main()
