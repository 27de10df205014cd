"""No import circle in the library: every ``import`` of a seq2seq_lab module, at module level
or inside a function, is an edge, and the graph of the package's modules has no cycle (a late
import that hides one still counts)."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "src" / "seq2seq_lab"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports (``from a import b`` counts as a.b when b
    is a module, else as a)."""
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                subs = [f"{base}.{alias.name}" for alias in node.names]
                targets = [s for s in subs if s in files] or [base]
            else:
                continue
            graph[name] |= {t for t in targets if t in files and t != name}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path a -> ... -> a, None when it has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_library_has_no_import_circle():
    found = cycle(imports_graph())
    assert found is None, "import circle: " + " -> ".join(found or [])


def test_the_walk_finds_a_circle_and_the_real_edges():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
    graph = imports_graph()
    assert "seq2seq_lab.report.spec" in graph["seq2seq_lab.report.checks"]
