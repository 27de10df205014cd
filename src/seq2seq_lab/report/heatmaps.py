"""The attention heatmaps of the reports written to one output folder: one copy per run in
``<out>/heatmaps/``, shared by every report there that shows it (an experiment's report and the
comparisons reading its runs pick the same run), recorded in ``<out>/heatmaps/sources.json``::

    image name -> {"run": the run directory, relative to <out>,
                   "source": the image's path inside the run, "seed": the run's seed,
                   "reports": {report directory name: the variant it shows the image as}}

Run images are not committed (.gitignore), so in a clone that did not make a run the copy is
its only picture: a copy stays while some report still shows it and goes with the last one
(a report whose report.md is gone shows nothing).

Reports written before the store kept their own copies in ``<report>/heatmaps/`` (with a
sources.json of image -> {variant, run relative to the report, seed, source}); a report made
again moves those copies into the store (:func:`adopt_own_folder`), so nothing is lost.
"""

from __future__ import annotations

import filecmp
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from seq2seq_lab.record.portable_paths import relative
from seq2seq_lab.report.plots import slug
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Comparison

STORE = "heatmaps"
SOURCES = "sources.json"


@dataclass(frozen=True)
class Heatmap:
    variant: str
    seed: int | None
    source: str  # the image's path inside its run directory
    path: Path  # the copy in the output folder's store
    run: str  # the run directory, relative to the output folder
    kept: bool = False  # kept from an earlier report: the run's own images are not here


def store_of(report_dir: Path) -> Path:
    """The store of the output folder a report directory lies in."""
    return report_dir.parent / STORE


def image_name(run: Path, out: Path) -> str:
    """One name per run: its directory relative to the output folder, as a file name
    ("runs/3" -> "runs-3.png"; each step out of the folder is an "up-")."""
    parts = Path(relative(run, out)).parts
    ups = sum(part == ".." for part in parts)
    rest = [part for part in parts if part not in ("..", ".")]
    return "up-" * ups + slug("-".join(rest)) + ".png"


def copy_heatmaps(comparison: Comparison, report_dir: Path) -> list[Heatmap]:
    """One attention heatmap per variant, from its first run (finished ones first) that has
    one: the run's own image, copied into the store, or the copy the store holds of that very
    run. The store then records which images this report shows and drops every image no
    report shows."""
    store, out = store_of(report_dir), report_dir.parent
    sources = adopt_own_folder(report_dir, read_sources(store))
    heatmaps = []
    for variant in comparison.variants:
        for run in sorted(variant.runs, key=lambda r: not r.finished):
            heatmap = own_heatmap(variant.label, run, out) or kept_heatmap(
                variant.label, run, out, sources
            )
            if heatmap is not None:
                heatmaps.append(heatmap)
                break
    write_sources(store, shown_by(report_dir, heatmaps, sources))
    return heatmaps


def kept_heatmaps(comparison: Comparison, report_dir: Path) -> list[Heatmap]:
    """The heatmaps the store records this report as showing, for a report made from its run
    table (no run images to copy): nothing is copied or dropped."""
    store = store_of(report_dir)
    sources = read_sources(store)
    if (report_dir / STORE / SOURCES).is_file():  # written before the store: move it in
        sources = adopt_own_folder(report_dir, sources)
        write_sources(store, sources)
    shown = {
        entry["reports"][report_dir.name]: (name, entry)
        for name, entry in sources.items()
        if report_dir.name in entry.get("reports", {}) and (store / name).is_file()
    }
    heatmaps = []
    for variant in comparison.variants:
        if variant.label in shown:
            name, entry = shown[variant.label]
            heatmaps.append(from_entry(variant.label, store / name, entry))
    return heatmaps


def own_heatmap(variant: str, run: Run, out: Path) -> Heatmap | None:
    image = run.attention_heatmap()
    if image is None:
        return None
    target = out / STORE / image_name(run.path, out)
    target.parent.mkdir(parents=True, exist_ok=True)
    # the reports of one folder that show this run share the copy: written once, not per report
    if not (target.is_file() and filecmp.cmp(image, target, shallow=False)):
        shutil.copyfile(image, target)
    source = image.relative_to(run.path).as_posix()
    return Heatmap(variant, run.seed, source, target, relative(run.path, out))


def kept_heatmap(variant: str, run: Run, out: Path, sources: dict[str, dict]) -> Heatmap | None:
    """The store's copy, when it came from this very run."""
    name = image_name(run.path, out)
    entry = sources.get(name)
    if not entry or not (out / STORE / name).is_file():
        return None
    if (out / str(entry.get("run", ""))).resolve() != run.path.resolve():
        return None
    return from_entry(variant, out / STORE / name, {**entry, "seed": run.seed})


def from_entry(variant: str, path: Path, entry: dict) -> Heatmap:
    source = str(entry.get("source") or "source not recorded")
    return Heatmap(variant, entry.get("seed"), source, path, str(entry.get("run", "")), kept=True)


def shown_by(report_dir: Path, heatmaps: list[Heatmap], sources: dict) -> dict[str, dict]:
    """The store's record once ``report_dir`` shows ``heatmaps`` and nothing else, and the
    reports that are gone show nothing."""
    out, me = report_dir.parent, report_dir.name
    for entry in sources.values():
        shows = entry.get("reports", {})
        entry["reports"] = {
            report: variant
            for report, variant in shows.items()
            if report != me and (out / report / "report.md").is_file()
        }
    for heatmap in heatmaps:
        entry = sources.setdefault(heatmap.path.name, {"reports": {}})
        entry.update(run=heatmap.run, seed=heatmap.seed, source=heatmap.source)
        entry["reports"][me] = heatmap.variant
    return {name: entry for name, entry in sources.items() if entry["reports"]}


def adopt_own_folder(report_dir: Path, sources: dict[str, dict]) -> dict[str, dict]:
    """Move the copies a report written before the store kept in ``<report>/heatmaps/`` into
    the store, recorded as shown by that report; its folder is removed."""
    own = report_dir / STORE
    legacy = read_sources(own)
    out = report_dir.parent
    for image, entry in legacy.items():
        if not (own / image).is_file() or "run" not in entry:
            continue
        run = report_dir / str(entry["run"])
        name = image_name(run, out)
        adopted = sources.setdefault(name, {"reports": {}})
        adopted.update(run=relative(run, out), seed=entry.get("seed"), source=entry.get("source"))
        adopted.setdefault("reports", {})[report_dir.name] = str(entry.get("variant", ""))
        (out / STORE).mkdir(parents=True, exist_ok=True)
        shutil.move(own / image, out / STORE / name)
    if legacy:
        shutil.rmtree(own)
    return sources


def read_sources(store: Path) -> dict[str, dict]:
    try:
        sources = json.loads((store / SOURCES).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none yet, or unreadable: no earlier copy can be kept
        return {}
    return sources if isinstance(sources, dict) else {}


def write_sources(store: Path, sources: dict[str, dict]) -> None:
    """Record ``sources`` and remove every image it does not name."""
    if store.is_dir():
        for image in store.glob("*.png"):
            if image.name not in sources:
                image.unlink()
    if not sources:
        (store / SOURCES).unlink(missing_ok=True)
        if store.is_dir() and not any(store.iterdir()):
            store.rmdir()
        return
    store.mkdir(parents=True, exist_ok=True)
    text = json.dumps(sources, indent=2, sort_keys=True) + "\n"
    (store / SOURCES).write_text(text, encoding="utf-8")
