"""Recorded paths a stranger can read: no directory of the machine a run ran on.

results.json (written through :func:`seq2seq_lab.record.results.write_results`) and the report's
runs.csv and report.md (the report reads every record through :func:`portable_record`, so
records written before this rule come out the same) name an absolute path by the first of
these that applies (:func:`portable_path`):

1. the run's own directory, or a path under it: ``${paths.output_dir}``,
   ``${paths.output_dir}/checkpoints`` (as conf/ writes them, so every run of a sweep records
   the same string);
2. the configured cache (``paths.cache_dir``), or a path under it: ``${paths.cache_dir}``,
   ``${paths.cache_dir}/spm``;
3. a path in the repository (the checkout that holds conf/) or beside it (under its parent
   directory): relative to the repository root, ``outputs/train/...``,
   ``../shared/data/multi30k``;
4. anywhere else: ``${KEY}``, the config key that named it (``${data.root}``), or without a
   key the path's last component.

A relative path (``data.root=../shared/data/multi30k`` as typed) holds nothing of the machine
and is kept as given; so is free text (an error message). A path is compared with a directory
both as written and with symbolic links resolved.

A link a report writes (a run's folder, an image) is relative to the report's folder
(:func:`relative`), so it holds in every clone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from seq2seq_lab.checkout import REPOSITORY

RUN_DIR = "${paths.output_dir}"
CACHE_DIR = "${paths.cache_dir}"


def _inside(path: str, directory: str) -> str | None:
    """``path`` relative to ``directory`` (POSIX, "." for the directory itself) when it is
    the directory or under it, else None."""
    for p, d in (
        (os.path.normpath(path), os.path.normpath(directory)),
        (os.path.realpath(path), os.path.realpath(directory)),
    ):
        if p == d or p.startswith(d.rstrip(os.sep) + os.sep):
            return Path(os.path.relpath(p, d)).as_posix()
    return None


def portable_path(
    path: str,
    key: str | None = None,
    *,
    run_dirs: Iterable[str | Path] = (),
    cache_dirs: Iterable[str | Path] = (),
    repository: Path = REPOSITORY,
) -> str:
    """``path`` named by the rule of the module docstring. ``key``: the config key that
    holds it; ``run_dirs`` / ``cache_dirs``: the absolute forms of the run's directory and
    of the configured cache (a run records the same directory in several forms)."""
    if not os.path.isabs(path):
        return path
    for name, directories in ((RUN_DIR, run_dirs), (CACHE_DIR, cache_dirs)):
        for directory in directories:
            rest = _inside(path, str(directory))
            if rest is not None:
                return name if rest == "." else f"{name}/{rest}"
    beside = _inside(path, str(repository.parent))
    if beside is not None:
        return PurePosixPath(os.path.relpath(repository.parent / beside, repository)).as_posix()
    return f"${{{key}}}" if key else PurePosixPath(path).name


def portable_record(results: dict[str, Any], run_dir: str | Path | None = None) -> dict[str, Any]:
    """A copy of a results.json record with every absolute path in it made portable: config
    values (named by their config key), the value of an override ``key=/a/path`` (by its
    key) and the record's own fields (``run_dir``, ``training.best_checkpoint``...).

    The run's directory is the one the record names (``run_dir``, ``config.paths.output_dir``)
    and ``run_dir``, where the record lies now; the cache is ``config.paths.cache_dir``.
    """
    config = results.get("config") if isinstance(results.get("config"), dict) else {}
    paths = config.get("paths") if isinstance(config.get("paths"), dict) else {}
    run_dirs = _absolute(results.get("run_dir"), paths.get("output_dir"), run_dir)
    cache_dirs = _absolute(paths.get("cache_dir"))

    def rewrite(value: Any, key: str) -> Any:
        if isinstance(value, dict):
            return {k: rewrite(v, f"{key}.{k}" if key else str(k)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [rewrite(v, key) for v in value]
        if isinstance(value, str):
            return portable_path(value, key, run_dirs=run_dirs, cache_dirs=cache_dirs)
        return value

    def override(text: str) -> str:
        key, sep, value = text.partition("=")
        return key + sep + rewrite(value, key.lstrip("+~")) if sep else text

    record = {k: v for k, v in results.items() if k not in ("config", "overrides")}
    portable = rewrite(record, "")
    if "config" in results:
        portable["config"] = rewrite(results["config"], "")  # keys as the config names them
    if "overrides" in results:
        portable["overrides"] = [
            override(o) if isinstance(o, str) else o for o in results["overrides"] or []
        ]
    return {k: portable[k] for k in results}  # the record's own order


# An absolute POSIX path in free text: from a slash to the next space, quote, comma, bracket or
# colon followed by a space (YAML's "key: value", a log line's "path: message").
ABSOLUTE_IN_TEXT = re.compile(
    r"(?<![\w.$}])/[^\s'\"`,\]\[(){}]+?(?=$|[\s'\"`,\]\[(){}]|:\s|:$)", re.M
)


def portable_text(
    text: str,
    *,
    run_dirs: Iterable[str | Path] = (),
    cache_dirs: Iterable[str | Path] = (),
    repository: Path = REPOSITORY,
) -> str:
    """``text`` (a log, or a YAML record Hydra or Lightning wrote into a run's directory) with
    each absolute path in the run's directory, the cache or beside the repository written by
    the rule of :func:`portable_path`; any other absolute path (the interpreter's, a system
    file's) is kept as written."""

    run_dirs, cache_dirs = list(run_dirs), list(cache_dirs)
    known = [*run_dirs, *cache_dirs, repository.parent]

    def rewrite(match: re.Match[str]) -> str:
        path = match.group(0)
        if all(_inside(path, str(directory)) is None for directory in known):
            return path
        return portable_path(path, run_dirs=run_dirs, cache_dirs=cache_dirs, repository=repository)

    return ABSOLUTE_IN_TEXT.sub(rewrite, text)


# The files a run's directory holds that its tools write with absolute paths in them
TEXT_RECORDS = ("*.yaml", "*.log", "wall_time.txt")


def make_run_dirs_portable(root: Path, cache_dirs: Iterable[str | Path]) -> list[Path]:
    """Rewrite the text records (TEXT_RECORDS) under ``root`` by :func:`portable_text`, each
    run's own directory read from its ``.hydra/hydra.yaml`` (``output_dir``, where it ran) and
    where it lies now; returns the files changed. results.json is portable as written."""
    from seq2seq_lab.record.atomic import write_text

    # each run's directories, read before any record is rewritten: where it lies now and
    # where it ran (hydra.yaml's output_dir)
    runs: dict[Path, list[str]] = {}
    for hydra_dir in sorted(root.rglob(".hydra")):
        run = hydra_dir.parent
        runs[run] = [str(run.resolve())]
        record = hydra_dir / "hydra.yaml"
        if record.is_file():
            found = re.search(r"^\s*output_dir: (\S+)$", record.read_text(encoding="utf-8"), re.M)
            if found and os.path.isabs(found.group(1)):
                runs[run].append(found.group(1))
    changed = []
    for pattern in TEXT_RECORDS:
        for path in sorted(root.rglob(pattern)):
            run = next((d for d in [path.parent, *path.parents] if d in runs), None)
            text = path.read_text(encoding="utf-8")
            portable = portable_text(text, run_dirs=runs.get(run, []), cache_dirs=cache_dirs)
            if portable != text:
                write_text(path, portable)
                changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    """``python -m seq2seq_lab.record.portable_paths DIR...``: make the runs under each DIR
    portable before they are committed (the resumable queues run it after each pass)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m seq2seq_lab.record.portable_paths",
        description="Rewrite absolute paths in the text records of the runs under DIR.",
    )
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument(
        "--cache-dir",
        action="append",
        default=[],
        help="the cache directory the runs used (default: conf/paths/default.yaml's)",
    )
    args = parser.parse_args(argv)
    default_cache = Path(os.environ.get("SEQ2SEQ_LAB_CACHE") or Path.home() / ".cache/seq2seq-lab")
    caches = args.cache_dir or [str(default_cache)]
    for directory in args.dirs:
        changed = make_run_dirs_portable(directory, caches)
        print(f"{directory}: {len(changed)} files made portable")
    return 0


def relative(path: Path, start: Path) -> str:
    """``path`` relative to the directory ``start``, as POSIX: a link or image a report
    writes, which holds in every clone of the repository (GitHub resolves relative links).
    As given where no relative path exists (another drive on Windows)."""
    try:
        return Path(os.path.relpath(Path(path).resolve(), Path(start).resolve())).as_posix()
    except ValueError:
        return Path(path).as_posix()


def _absolute(*paths: Any) -> list[str]:
    return [str(p) for p in paths if isinstance(p, str | Path) and os.path.isabs(p)]


if __name__ == "__main__":
    raise SystemExit(main())
