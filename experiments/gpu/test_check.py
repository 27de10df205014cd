"""experiments/gpu/check.sh cannot rot between GPU loans: its dry run (every step at a toy size
on the CPU) runs here, and each step's result file and the summary table are checked; and the
figures record.py derives (seconds to a BLEU, GPU utilisation, pytest's counts) are checked on
known inputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import record  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MULTI30K = REPO.parent / "shared" / "data" / "multi30k"

# nvidia-smi as a GPU machine answers check.sh's two questions: the driver, and utilisation and
# memory sampled every -lms milliseconds until it is stopped
FAKE_SMI = """#!/usr/bin/env bash
case "$*" in
  *driver_version*) echo 550.54.15 ;;
  *utilization.gpu*) while true; do echo "37, 1024"; echo "41, 2048"; sleep 0.2; done ;;
  *) exit 9 ;;
esac
"""


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    if not (MULTI30K / "train.de").is_file():
        pytest.skip("no shared Multi30k copy (../shared/data/multi30k)")
    tmp = tmp_path_factory.mktemp("gpu_check")
    smi = tmp / "nvidia-smi"
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    out = tmp / "out"
    env = {**os.environ, "PYTHON": sys.executable, "NVIDIA_SMI": str(smi),
           "WORK": str(tmp / "work"), "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    done = subprocess.run(["bash", "experiments/gpu/check.sh", "--dry-run", "--out", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)  # fmt: skip
    return out, done


def load(out: Path, name: str) -> dict:
    return json.loads((out / f"{name}.json").read_text())


@pytest.mark.slow
def test_every_step_of_the_dry_run_writes_its_result(dry_run):
    out, done = dry_run
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # what comes back from a device call: at most 8 plain files, none in a folder
    files = sorted(p.name for p in out.iterdir())
    assert files == ["check.log", "facts.json", "grid.json", "grid.tar.gz", "summary.txt",
                     "tests.json", "throughput.json", "time_to_bleu.json"]  # fmt: skip
    assert all(p.stat().st_size < 16 * 2**20 for p in out.iterdir())

    facts = load(out, "facts")
    assert facts["status"] == "ok" and facts["torch"] and facts["driver"] == "550.54.15"
    assert facts["paths"]["repo"] == str(REPO) and facts["paths"]["out"] == str(out.resolve())

    tests = load(out, "tests")
    assert tests["status"] == "ok", tests["log_tail"]
    assert tests["counts"]["passed"] >= 4 and "failed" not in tests["counts"]

    throughput = load(out, "throughput")
    assert throughput["status"] == "ok", throughput["log_tail"]
    medians = throughput["result"]["median_tokens_per_second"]
    assert set(medians) == {"ours-transformer-bf16", "torch-transformer-bf16"}
    assert all(v > 0 for v in medians.values())
    assert throughput["result"]["accelerator"] == "cpu"
    util = throughput["gpu_utilisation"]  # the fake's samples, read while the systems ran
    assert util["samples"] >= 2 and 37 <= util["mean_percent"] <= 41
    assert util["peak_memory_mib"] == 2048

    bleu = load(out, "time_to_bleu")
    assert bleu["status"] == "ok", bleu["log_tail"]
    # its target of 0 BLEU is reached at the first mark: training stopped there, the second
    # mark (18 s later) never came
    ours = bleu["result"]["ours"]
    assert set(ours["marks"]) == {"0.005"} and ours["stopped_at_minute"] == 0.005
    assert ours["steps"] >= 1
    assert set(bleu["seconds_to_bleu"]) == {"35", "38"}
    assert "trainer.accelerator=cpu" in ours["command"]

    grid = load(out, "grid")
    assert grid["status"] == "ok", grid["log_tail"]
    assert grid["runs"] == {"completed": 1}
    listing = subprocess.run(["tar", "tzf", str(out / "grid.tar.gz")], capture_output=True,
                             text=True, check=True).stdout.split()  # fmt: skip
    assert "e4_norm_warmup/results/gpu-dry-run/runs/0/results.json" in listing
    assert "e4_norm_warmup/results/gpu-dry-run/wall_time.txt" in listing
    assert not [name for name in listing if name.endswith((".ckpt", ".png"))]

    table = (out / "summary.txt").read_text()
    assert table in done.stdout  # printed at the end, and kept
    rows = {line.split("|")[0].strip(): line for line in table.splitlines()[2:]}
    assert list(rows) == list(record.STEPS)
    assert all(" ok " in row for row in rows.values()), table
    assert "ours-transformer-bf16 / torch-transformer-bf16" in rows["throughput"]
    assert "GPU util mean 39%" in rows["throughput"]
    assert "runs: 1 completed" in rows["grid"]


def test_seconds_to_a_bleu_is_the_first_mark_at_or_above_it():
    marks = {"0.5": {"greedy": 20.0}, "1": {"greedy": 35.0}, "1.5": {"greedy": 34.0},
             "2": {"greedy": 38.2}}  # fmt: skip
    assert record.seconds_to(marks, [35, 38, 40]) == {"35": 60.0, "38": 120.0, "40": None}


def test_utilisation_skips_headers_and_a_line_cut_by_the_stop(tmp_path):
    samples = tmp_path / "smi.csv"
    samples.write_text("utilization.gpu, memory.used\n90, 100\n50, 300\n7")
    assert record.utilisation(samples) == {"samples": 2, "mean_percent": 70.0,
                                           "peak_percent": 90.0, "peak_memory_mib": 300.0}  # fmt: skip
    assert record.utilisation(tmp_path / "none.csv") is None


def test_a_cut_or_failed_step_is_recorded_as_such(tmp_path):
    log = tmp_path / "tests.log"
    log.write_text("....F\n1 failed, 4 passed, 9 deselected in 3.2s\n")
    for rc, status in ((124, "timed out"), (137, "timed out"), (1, "failed (exit 1)")):
        subprocess.run([sys.executable, str(Path(record.__file__)), "step", str(tmp_path),
                        "tests", "--rc", str(rc), "--seconds", "5", "--log", str(log)],
                       check=True)  # fmt: skip
        written = json.loads((tmp_path / "tests.json").read_text())
        assert written["status"] == status
        assert written["counts"] == {"failed": 1, "passed": 4, "deselected": 9}
    table = record.summary(tmp_path)
    assert "tests        | failed (exit 1) | 5" in table
    assert "grid         | not run" in table


def test_the_grid_counts_its_runs_by_status(tmp_path):
    for job, status in enumerate(["completed", "interrupted", "completed"]):
        (tmp_path / str(job)).mkdir()
        (tmp_path / str(job) / "results.json").write_text(json.dumps({"status": status}))
    (tmp_path / "3").mkdir()  # started, nothing recorded yet: not a run
    assert record.run_statuses(tmp_path) == {"completed": 2, "interrupted": 1}


def test_portable_leaves_no_directory_of_the_device_machine(tmp_path):
    sys.path.insert(0, str(REPO / "tests"))
    from test_repository_size import MACHINE_PATH

    # the device machine's directories, as it had them: here under pytest's temporary folder
    device = tmp_path / "device"
    paths = {"repo": str(device / "main"), "out": str(device / "out")}
    paths["work"] = str(device / "gpu-check.abc")
    pytest_tmp = str(device / "pytest-of-root" / "pytest-0" / "x")
    fetched = tmp_path / "fetched"
    (fetched / "diagnosis").mkdir(parents=True)
    (fetched / "facts.json").write_text(json.dumps({"step": "facts", "paths": paths}))
    (fetched / "check.log").write_text(
        f"== facts: record.py facts {paths['out']}\nRESULTS={paths['repo']}/experiments "
        f"--work {paths['work']}/ttb\nCheckpoint directory {pytest_tmp}\n"
    )
    (fetched / "diagnosis" / "run.json").write_text(json.dumps({"json": paths["out"] + "/a"}))
    done = subprocess.run([sys.executable, str(REPO / "experiments/gpu/record.py"), "portable",
                           str(fetched)], capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    log = (fetched / "check.log").read_text()
    # any other temporary folder under /tmp becomes $TMPDIR's
    rest = "$TMPDIR/" + pytest_tmp[5:] if pytest_tmp.startswith("/tmp/") else pytest_tmp
    assert log == (
        "== facts: record.py facts $OUT\nRESULTS=experiments --work $WORK/ttb\n"
        f"Checkpoint directory {rest}\n"
    )
    for path in fetched.rglob("*.*"):
        assert not MACHINE_PATH.findall(path.read_text()), path
    recorded = json.loads((fetched / "facts.json").read_text())["paths"]
    assert recorded == {"repo": ".", "out": "$OUT", "work": "$WORK"}
