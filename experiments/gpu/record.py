"""The result files of experiments/gpu/check.sh: one JSON file per step, and the summary table.

check.sh runs every step as its own command under a time limit and then calls this to write
that step's file, whatever happened to it (its exit status, its seconds, the end of its log,
and what it measured where it got that far), so a step cut or failed never costs the files of
the others. ``summary`` reads whichever step files exist and prints the one table.

    python experiments/gpu/record.py facts OUT
    python experiments/gpu/record.py step OUT NAME --rc RC --seconds S --log LOG [--result JSON]
        [--smi SAMPLES] [--targets 35,38]
    python experiments/gpu/record.py summary OUT
    python experiments/gpu/record.py portable DIR [--repo R --out O --work W]

``portable`` is run here, on the fetched files before they are committed: the device machine's
directories (the checkout, OUT, the scratch WORK, pytest's temporary folders) become
``$REPO``-relative paths, ``$OUT``, ``$WORK`` and ``$TMPDIR``, read from facts.json's ``paths``
where the options do not give them.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

STEPS = ("facts", "tests", "throughput", "time_to_bleu", "grid")
LOG_TAIL = 4000  # characters of a step's log kept in its file: the error, not the whole run


def status(rc: int) -> str:
    """A step's exit status in words: 124/137 are `timeout`'s (its limit, then its kill)."""
    if rc == 0:
        return "ok"
    if rc in (124, 137):
        return "timed out"
    return f"failed (exit {rc})"


def write(out: Path, name: str, record: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def portable(folder: Path, paths: dict[str, str]) -> list[Path]:
    """Rewrite the text files under ``folder`` so that they name no directory of the machine
    they were made on (``paths``: repo, out, work as that machine had them); returns the files
    changed. The repository's own paths become relative to it."""
    replacements = [(paths[key], name) for key, name in (("work", "$WORK"), ("out", "$OUT"))
                    if paths.get(key)]  # fmt: skip
    if paths.get("repo"):
        replacements.append((paths["repo"].rstrip("/") + "/", ""))
        replacements.append((paths["repo"].rstrip("/"), "."))
    replacements.append(("/tmp/", "$TMPDIR/"))  # pytest's and other temporary folders
    changed = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix not in (".json", ".txt", ".log"):
            continue
        text = path.read_text(encoding="utf-8")
        new = text
        for old, replacement in replacements:
            new = new.replace(old, replacement)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def facts(smi: str = "nvidia-smi") -> dict:
    """The machine: GPU model, driver, torch and CUDA versions, bf16 support."""
    import torch

    cuda = torch.cuda.is_available()
    driver = None
    if shutil.which(smi):
        done = subprocess.run([smi, "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True)  # fmt: skip
        driver = (
            done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout else None
        )
    return {
        "gpu": torch.cuda.get_device_name(0) if cuda else None,
        "gpu_memory_gib": (
            round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1) if cuda else None
        ),
        "gpu_count": torch.cuda.device_count(),
        "driver": driver,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if cuda else None,
        "bf16": torch.cuda.is_bf16_supported() if cuda else None,
        "python": platform.python_version(),
        "cpu_count": __import__("os").cpu_count(),
    }


def utilisation(samples: Path | None) -> dict | None:
    """Mean and peak GPU utilisation (%) and peak memory (MiB) of nvidia-smi's csv samples
    (``utilization.gpu, memory.used`` without units); None where there were none."""
    if samples is None or not samples.is_file():
        return None
    rows = []
    for line in samples.read_text().splitlines():
        fields = [f.strip() for f in line.split(",")]
        try:
            rows.append((float(fields[0]), float(fields[1])))
        except (ValueError, IndexError):
            continue  # a header, or a line cut when the sampler was stopped
    if not rows:
        return None
    util = [r[0] for r in rows]
    return {"samples": len(rows), "mean_percent": sum(util) / len(util),
            "peak_percent": max(util), "peak_memory_mib": max(r[1] for r in rows)}  # fmt: skip


def seconds_to(marks: dict[str, dict], targets: list[float]) -> dict[str, float | None]:
    """{target: training-clock seconds of the first mark whose greedy BLEU reaches it, or
    None} from time_to_bleu.json's ``marks`` ({minute: {"greedy": bleu, ...}})."""
    scored = sorted((float(m), s.get("greedy", s.get("bleu"))) for m, s in marks.items())
    return {
        f"{t:g}": next((m * 60 for m, bleu in scored if bleu is not None and bleu >= t), None)
        for t in targets
    }


def passed(log: str) -> dict[str, int]:
    """pytest's closing counts ("3 passed, 1 failed, 2 deselected in 4.1s")."""
    lines = [line for line in log.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    if not lines:
        return {}
    return {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", lines[-1])
            if word in ("passed", "failed", "errors", "error", "skipped", "deselected")}  # fmt: skip


def run_statuses(runs: Path) -> dict[str, int]:
    """{status: count} of a sweep's runs (each ``<job>/results.json``), read here rather than
    by seq2seq_lab.report, which needs scipy, absent from the device machine."""
    counts: dict[str, int] = {}
    for file in sorted(runs.glob("*/results.json")):
        status = json.loads(file.read_text()).get("status", "unknown")
        counts[status] = counts.get(status, 0) + 1
    return counts


def step(args) -> dict:
    log = args.log.read_text(errors="replace") if args.log and args.log.is_file() else ""
    record: dict = {"step": args.name, "status": status(args.rc), "exit": args.rc,
                    "seconds": args.seconds, "limit_seconds": args.limit}  # fmt: skip
    if args.skipped:
        record["status"] = f"skipped: {args.skipped}"
    if args.name == "tests":
        record["counts"] = passed(log)
    if args.result and args.result.is_file():
        result = json.loads(args.result.read_text())
        record["result"] = result
        if args.name == "time_to_bleu" and "ours" in result:
            targets = [float(t) for t in args.targets.split(",")]
            record["seconds_to_bleu"] = seconds_to(result["ours"]["marks"], targets)
            record["best_greedy_bleu"] = max(
                (s["greedy"] for s in result["ours"]["marks"].values()), default=None
            )
    if args.name == "throughput":
        record["gpu_utilisation"] = utilisation(args.smi)
    if args.runs is not None:
        record["runs"] = run_statuses(args.runs)
    record["log_tail"] = log[-LOG_TAIL:]
    return record


def headline(record: dict) -> str:
    """One cell of the summary table: what the step found."""
    name, result = record["step"], record.get("result")
    if name == "facts":
        if not record.get("torch"):
            return ""
        gpu = record.get("gpu") or "no GPU"
        return (f"{gpu}, driver {record.get('driver')}, torch {record['torch']}, "
                f"CUDA {record.get('cuda')}, bf16 {record.get('bf16')}")  # fmt: skip
    if name == "tests":
        return ", ".join(f"{n} {w}" for w, n in record.get("counts", {}).items())
    if name == "throughput" and result:
        cells = [f"{s} {v:,.0f}" for s, v in result["median_tokens_per_second"].items()]
        cells += [f"{pair} {r:.2f}x" for pair, r in result["ratios"].items()]
        util = record.get("gpu_utilisation")
        cells.append(f"GPU util mean {util['mean_percent']:.0f}%" if util else "no nvidia-smi")
        return "target tok/s: " + "; ".join(cells)
    if name == "time_to_bleu" and "seconds_to_bleu" in record:
        reached = [f"{t} BLEU at {s:g} s" if s is not None else f"{t} BLEU not reached"
                   for t, s in record["seconds_to_bleu"].items()]  # fmt: skip
        return f"best greedy {record['best_greedy_bleu']:.2f}; " + "; ".join(reached)
    if name == "grid" and "runs" in record:
        return "runs: " + (", ".join(f"{n} {s}" for s, n in record["runs"].items()) or "none")
    return ""


def summary(out: Path) -> str:
    rows = [("step", "status", "seconds", "result")]
    for name in STEPS:
        file = out / f"{name}.json"
        if not file.is_file():
            rows.append((name, "not run", "", ""))
            continue
        record = json.loads(file.read_text())
        seconds = record.get("seconds")
        rows.append((name, record["status"], f"{seconds:.0f}" if seconds is not None else "",
                     headline(record)))  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + " | " + r[3] for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("facts")
    p.add_argument("out", type=Path)
    p.add_argument("--smi", default="nvidia-smi")
    p.add_argument("--repo", help="the checkout's path there (for `portable`)")
    p.add_argument("--work", help="the scratch folder's path there (for `portable`)")
    p = sub.add_parser("step")
    p.add_argument("out", type=Path)
    p.add_argument("name", choices=STEPS)
    p.add_argument("--rc", type=int, required=True)
    p.add_argument("--seconds", type=float)
    p.add_argument("--limit", type=float)
    p.add_argument("--log", type=Path)
    p.add_argument("--result", type=Path, help="the JSON the step's script wrote")
    p.add_argument("--smi", type=Path, help="nvidia-smi samples taken during the step")
    p.add_argument("--targets", default="35,38")
    p.add_argument("--runs", type=Path, help="the grid's sweep folder: its runs' statuses")
    p.add_argument("--skipped", help="why the step did not run")
    p = sub.add_parser("summary")
    p.add_argument("out", type=Path)
    p = sub.add_parser("portable")
    p.add_argument("folder", type=Path, help="the fetched files")
    p.add_argument("--repo")
    p.add_argument("--out")
    p.add_argument("--work")
    args = parser.parse_args()
    if args.command == "portable":
        facts_file = args.folder / "facts.json"
        recorded = (json.loads(facts_file.read_text()) if facts_file.is_file() else {}).get(
            "paths"
        ) or {}
        given = {"repo": args.repo, "out": args.out, "work": args.work}
        paths = {**recorded, **{k: v for k, v in given.items() if v}}
        for path in portable(args.folder, paths):
            print(f"made portable: {path}")
    elif args.command == "facts":
        where = {"repo": args.repo, "out": str(args.out.resolve()), "work": args.work}
        record = {"step": "facts", "status": "ok", "exit": 0, **facts(args.smi), "paths": where}
        write(args.out, "facts", record)
        print(json.dumps(record))
    elif args.command == "step":
        record = step(args)
        write(args.out, args.name, record)
    else:
        table = summary(args.out)
        (args.out / "summary.txt").write_text(table, encoding="utf-8")
        sys.stdout.write(table)


if __name__ == "__main__":
    main()
