"""translate as a user runs it: each line answered as it arrives on stdin (a pipe here, as at a
terminal), and the beam's n best with their scores."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli

pytestmark = pytest.mark.slow

SOURCES = ["a b c d", "e f g", "h i j k l"]


@pytest.fixture
def ckpt(smoke_run) -> Path:
    return smoke_run[0] / "checkpoints" / "best.ckpt"


def _read_line(stream, seconds: float) -> str:
    """One line of ``stream`` within ``seconds``, else fail: the output of a line not yet
    followed by the end of the input."""
    ready, _, _ = select.select([stream], [], [], seconds)
    assert ready, "no output for a line while stdin stays open"
    return stream.readline()


def test_each_line_is_translated_before_the_next_arrives(ckpt):
    batch = run_cli("translate", f"ckpt_path={ckpt}", stdin="".join(s + "\n" for s in SOURCES))
    assert batch.returncode == 0, batch.stderr[-3000:]
    expected = batch.stdout.splitlines()
    proc = subprocess.Popen(
        [sys.executable, "-m", "seq2seq_lab.translate", f"ckpt_path={ckpt}"],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        answered = []
        for source in SOURCES:
            proc.stdin.write(source + "\n")
            proc.stdin.flush()
            answered.append(_read_line(proc.stdout, 120).rstrip("\n"))
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0, proc.stderr.read()[-3000:]
    finally:
        proc.kill()
    # line by line, the same translations as the whole input at once
    assert answered == expected and proc.stdout.read() == ""


def test_n_best_lists_the_beams_hypotheses_best_first(ckpt):
    stdin = "".join(s + "\n" for s in SOURCES)
    beam = ("decoding.beam_size=4",)
    best = run_cli("translate", f"ckpt_path={ckpt}", *beam, stdin=stdin)
    proc = run_cli("translate", f"ckpt_path={ckpt}", *beam, "n_best=3", stdin=stdin)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line.split("\t") for line in proc.stdout.splitlines()]
    assert [int(r[0]) for r in rows] == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    for n, first in enumerate(best.stdout.splitlines()):
        scores = [float(r[1]) for r in rows[3 * n : 3 * n + 3]]
        assert scores == sorted(scores, reverse=True)
        assert rows[3 * n][2] == first  # the best of the n is the one translation


def test_more_best_than_the_beam_keeps_is_one_line(ckpt):
    proc = run_cli(
        "translate", f"ckpt_path={ckpt}", "decoding.beam_size=2", "n_best=3", stdin="a b\n"
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        "error: n_best=3: expected 1 to decoding.beam_size=2 (the beam keeps that many "
        "hypotheses; for more, set decoding.beam_size=3)\n"
    )


def test_an_empty_line_is_answered_with_an_empty_line(ckpt):
    proc = run_cli("translate", f"ckpt_path={ckpt}", stdin="a b c\n\n   \nd e\n")
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.split("\n")
    assert len(lines) == 5 and lines[1:3] == ["", ""] and lines[0] and lines[3]


def test_at_a_terminal_translate_says_what_to_do_and_prompts(ckpt):
    import pty

    from seq2seq_lab.pipeline.translation import PROMPT, PROMPT_INTRO

    terminal, typed_into = pty.openpty()  # stdin a terminal, as when a user types
    proc = subprocess.Popen(
        [sys.executable, "-m", "seq2seq_lab.translate", f"ckpt_path={ckpt}"],
        cwd=REPO, stdin=typed_into, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    os.close(typed_into)
    try:
        os.write(terminal, b"a b c\n")
        answer = _read_line(proc.stdout, 120)
        os.write(terminal, b"\x04")  # Ctrl-D
        assert proc.wait(timeout=60) == 0
        stderr = proc.stderr.read()
    finally:
        proc.kill()
        os.close(terminal)
    assert answer.strip() and proc.stdout.read() == ""  # the output: translations only
    assert stderr == f"{PROMPT_INTRO}\n{PROMPT}{PROMPT}\n"
