"""Every relative link in the tracked Markdown (READMEs, notes, docs, committed reports) points at
a file of the checkout. The one exception is a file git ignores by rule: the plots a report
redraws (``.gitignore``), linked from a report.md that is committed without them.

Hand-written prose is not checked by the generated-block test (test_report_readmes.py); three
experiment READMEs once linked ``conf/experiment_size/...`` after the sizes had moved into the
experiment folders.
"""

from __future__ import annotations

import re
import subprocess

from test_repository_size import REPO, tracked_files

# [text](target) with a target that has no scheme (http:, mailto:) and is not an anchor only
LINK = re.compile(r"\]\((?![a-z][a-z0-9+.-]*:)([^)\s#]+)(?:#[^)\s]*)?\)")


def ignored(paths: list[str]) -> set[str]:
    """The paths (relative to the checkout) that .gitignore's rules match."""
    if not paths:
        return set()
    out = subprocess.run(
        ["git", "-C", str(REPO), "check-ignore", "--no-index", "--stdin"],
        input="\n".join(paths), capture_output=True, text=True, check=False,
    )  # fmt: skip
    return set(out.stdout.split())


def test_every_relative_link_in_the_tracked_markdown_resolves():
    documents = [name for name in tracked_files() if name.endswith(".md")]
    assert documents
    missing: list[tuple[str, str, str]] = []
    for name in documents:
        path = REPO / name
        for target in LINK.findall(path.read_text(encoding="utf-8")):
            resolved = (path.parent / target).resolve()
            if not resolved.exists():
                relative = (
                    resolved.relative_to(REPO).as_posix()
                    if resolved.is_relative_to(REPO)
                    else str(resolved)
                )
                missing.append((name, target, relative))
    redrawn = ignored([relative for _, _, relative in missing])
    broken = [f"{name}: {target}" for name, target, relative in missing if relative not in redrawn]
    assert not broken, "links to no file:\n" + "\n".join(broken)
