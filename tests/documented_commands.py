"""The commands the documentation shows, collected as a reader finds them.

A documented command is a line that starts with ``python -m seq2seq_lab``, ``seq2seq-``,
``bash experiments/`` or ``python experiments/`` (after an optional ``$`` prompt, environment
assignments such as ``MINUTES=150`` or an ``echo ... |``), found

- in a fenced code block or an inline code span of README.md, docs/*.md, experiments/*/README.md
  (experiments/benchmarks/README.md among them);
- in a comment of a conf/ file (the usage lines at the top of a recipe or a group).

A code block's ``\\`` continuations are joined and a trailing ``# comment`` is dropped, so
the text is what a shell would run. The same text in several places is one command with all its
places. A new command in any of these files is collected without editing anything here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_STARTS = r"(?:python -m seq2seq_lab|seq2seq-|bash experiments/|python experiments/)"
_COMMAND = re.compile(
    r"^(?:\$\s+)?"
    r"((?:echo\s+(?:\"[^\"]*\"|'[^']*')\s*\|\s*)?"  # a line piped into the command
    r"(?:[A-Z_]+=(?:\"[^\"]*\"|'[^']*'|\S*)\s+)*" + _STARTS + r".*)$"  # environment assignments
)
_FENCE = re.compile(r"^\s*(```|~~~)")
_SPAN = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Documented:
    """One command as typed (``text``) and every ``file:line`` that shows it (``places``)."""

    text: str
    places: tuple[str, ...]


def documentation_files(repo: Path) -> list[Path]:
    """The files whose commands are collected (module docstring)."""
    return [
        repo / "README.md",
        *sorted((repo / "docs").glob("*.md")),
        *sorted((repo / "experiments").glob("*/README.md")),
        *sorted((repo / "conf").rglob("*.yaml")),
    ]


def strip_comment(line: str) -> str:
    """``line`` without a trailing shell comment (a ``#`` after a blank, outside quotes)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def _command(text: str) -> str | None:
    match = _COMMAND.match(strip_comment(text.strip()))
    return " ".join(match.group(1).split()) if match else None


def _markdown_commands(text: str) -> list[tuple[int, str]]:
    found, in_block, pending, pending_line = [], False, "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            in_block, pending = not in_block, ""
            continue
        if in_block:
            if not pending:
                pending_line = number
            joined = pending + line.strip()
            if joined.endswith("\\"):
                pending = joined[:-1] + " "
                continue
            pending = ""
            command = _command(joined)
            if command:
                found.append((pending_line, command))
        else:
            for span in _SPAN.findall(line):
                command = _command(span)
                if command:
                    found.append((number, command))
    return found


def _config_commands(text: str) -> list[tuple[int, str]]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("#"):
            command = _command(stripped.lstrip("#"))
            if command:
                found.append((number, command))
    return found


def collect(repo: Path) -> list[Documented]:
    """Every documented command under ``repo``, in order of first appearance."""
    places: dict[str, list[str]] = {}
    for path in documentation_files(repo):
        text = path.read_text(encoding="utf-8")
        commands = _markdown_commands(text) if path.suffix == ".md" else _config_commands(text)
        for number, command in commands:
            places.setdefault(command, []).append(f"{path.relative_to(repo)}:{number}")
    return [Documented(text, tuple(where)) for text, where in places.items()]
